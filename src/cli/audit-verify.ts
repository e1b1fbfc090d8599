// `npm run audit:verify [-- --company <id>]`: checks the token audit chain of one company, or of
// every company when --company is left out, in DATABASE_URL (or the running npm start's embedded
// database when DATABASE_URL is unset): one line per company, naming the first event that does not
// fit (src/audit/verify.ts says what fitting means). Read-only.
// Exit status: 0 every chain checked holds, 1 one does not (or the database could not be read),
// 2 bad arguments (an unknown company included).
import { parseArgs } from 'node:util';
import pg from 'pg';
import { BREAK_EXPLANATIONS, verifyChain } from '../audit/verify.js';
import { commandDatabase } from '../db/embedded-handoff.js';
import { MAX_INT4 } from '../db/int4.js';
import { CONNECT_TIMEOUT_MS } from '../db/pool.js';

const USAGE =
  'usage: npm run audit:verify -- [--company <company id>]\n' +
  "  checks the company's token audit chain; without --company, every company's, one line each\n" +
  '  exit status: 0 verified, 1 a chain is broken (or the database could not be read), 2 bad arguments';

function usageError(message: string): never {
  console.error(message);
  console.error(USAGE);
  process.exit(2);
}

/** The company asked for, or null for every company. */
function companyArgument(): number | null {
  let values;
  try {
    ({ values } = parseArgs({
      strict: true,
      allowPositionals: false,
      options: { company: { type: 'string' }, help: { type: 'boolean' } },
    }));
  } catch (error) {
    return usageError((error as Error).message.split('\n')[0]!);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const id = values.company;
  if (id === undefined) return null;
  if (/^[1-9]\d{0,9}$/.test(id) && Number(id) <= MAX_INT4) return Number(id);
  return usageError(`--company must be a company id (a whole number above 0), not "${id}"`);
}

const companyId = companyArgument();
const database = commandDatabase('npm run audit:verify');
if ('problem' in database) {
  console.error(database.problem);
  process.exit(1);
}

const events = (count: number) => `${count} ${count === 1 ? 'event' : 'events'}`;

/** Prints the company's line; true when its chain holds. */
async function verifyCompany(client: pg.Client, id: number): Promise<boolean> {
  const verdict = await verifyChain(client, id);
  if (verdict.ok) {
    console.log(`company ${id}: chain of ${events(verdict.events)} verified${verdict.head ? ` (head ${verdict.head})` : ''}`);
    return true;
  }
  const { event, reason, expectedSequence } = verdict;
  console.log(
    `company ${id}: event ${event.id} (sequence ${event.sequence}) does not fit: ${BREAK_EXPLANATIONS[reason]}` +
      (reason === 'sequence_gap' ? ` (expected sequence ${expectedSequence})` : '') +
      `; the ${events(verdict.events)} before it fit`,
  );
  return false;
}

const client = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
let status = 1;
try {
  await client.connect();
  if (companyId !== null) {
    const { rowCount } = await client.query('SELECT 1 FROM companies WHERE id = $1', [companyId]);
    if (!rowCount) {
      // a mistyped id is the caller's error, not a broken chain: 2, as for any bad argument
      console.error(`company ${companyId}: no such company (npm run audit:verify without --company checks every company)`);
      status = 2;
    } else {
      status = (await verifyCompany(client, companyId)) ? 0 : 1;
    }
  } else {
    const { rows } = await client.query<{ id: number }>('SELECT id FROM companies ORDER BY id');
    const broken: number[] = [];
    for (const { id } of rows) if (!(await verifyCompany(client, id))) broken.push(id);
    const companies = `${rows.length} ${rows.length === 1 ? 'company' : 'companies'}`;
    console.log(
      broken.length === 0
        ? `${companies} checked: every chain verified`
        : `${companies} checked: ${broken.length} broken (${broken.map((id) => `company ${id}`).join(', ')})`,
    );
    status = broken.length === 0 ? 0 : 1;
  }
} catch (error) {
  console.error(`audit:verify failed: ${(error as Error).message}`);
  // 42P01: no token_audit_events table: the database was never migrated (or predates the trail)
  if ((error as { code?: string }).code === '42P01') console.error('the database is not migrated yet: run npm run migrate first');
} finally {
  await client.end().catch(() => {});
}
process.exit(status);
