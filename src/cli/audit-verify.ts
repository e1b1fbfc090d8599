// `npm run audit:verify -- --company <id>`: checks a company's token audit chain in DATABASE_URL
// (or the running npm start's embedded database when DATABASE_URL is unset) and names the first
// event that does not fit (src/audit/verify.ts says what fitting means). Read-only.
// Exit status: 0 the chain holds, 1 it does not (or the database could not be read), 2 bad arguments.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { BREAK_EXPLANATIONS, verifyChain } from '../audit/verify.js';
import { commandDatabase } from '../db/embedded-handoff.js';
import { MAX_INT4 } from '../db/int4.js';
import { CONNECT_TIMEOUT_MS } from '../db/pool.js';

const USAGE = 'usage: npm run audit:verify -- --company <company id>';

function companyArgument(): number {
  try {
    const { values } = parseArgs({ strict: true, allowPositionals: false, options: { company: { type: 'string' } } });
    const id = values.company;
    if (id !== undefined && /^[1-9]\d{0,9}$/.test(id) && Number(id) <= MAX_INT4) return Number(id);
    console.error(id === undefined ? '--company is required' : `--company must be a company id (a whole number above 0), not "${id}"`);
  } catch (error) {
    console.error((error as Error).message.split('\n')[0]);
  }
  console.error(USAGE);
  process.exit(2);
}

const companyId = companyArgument();
const database = commandDatabase('npm run audit:verify');
if ('problem' in database) {
  console.error(database.problem);
  process.exit(1);
}

const events = (count: number) => `${count} ${count === 1 ? 'event' : 'events'}`;

const client = new pg.Client({ connectionString: database.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
let status = 1;
try {
  await client.connect();
  const { rowCount } = await client.query('SELECT 1 FROM companies WHERE id = $1', [companyId]);
  if (!rowCount) {
    console.error(`company ${companyId}: no such company`);
  } else {
    const verdict = await verifyChain(client, companyId);
    if (verdict.ok) {
      console.log(`company ${companyId}: chain of ${events(verdict.events)} verified${verdict.head ? ` (head ${verdict.head})` : ''}`);
      status = 0;
    } else {
      const { event, reason, expectedSequence } = verdict;
      console.log(
        `company ${companyId}: event ${event.id} (sequence ${event.sequence}) does not fit: ${BREAK_EXPLANATIONS[reason]}` +
          (reason === 'sequence_gap' ? ` (expected sequence ${expectedSequence})` : '') +
          `; the ${events(verdict.events)} before it fit`,
      );
    }
  }
} catch (error) {
  console.error(`audit:verify failed: ${(error as Error).message}`);
  // 42P01: no token_audit_events table: the database was never migrated (or predates the trail)
  if ((error as { code?: string }).code === '42P01') console.error('the database is not migrated yet: run npm run migrate first');
} finally {
  await client.end().catch(() => {});
}
process.exit(status);
