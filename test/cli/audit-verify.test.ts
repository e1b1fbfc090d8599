// `npm run audit:verify -- --company <id>` as an operator runs it: 0 and "chain of N events
// verified" for an intact chain; 1 naming the first event that does not fit once an event has been
// altered by SQL, altered with its hash recomputed, or removed; another company's chain unaffected;
// without --company, a line for every company and 1 naming the broken ones; 2 for bad arguments and
// an unknown company. To alter the append-only table at all, the test does what only the table's
// owner or a superuser can (its connection is the postgres superuser): in one transaction it
// disables the guard trigger, changes the row, and enables the trigger again as it was (ALWAYS).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { nodeArgs } from '../helpers/entry.js';
import { BASE, createWorld, type CreatedToken } from '../routes/api-tokens/setup.js';

const execFileAsync = promisify(execFile);
const world = await createWorld(t);
const { a, b } = world;

async function verify(args: string[], env: Record<string, string> = { DATABASE_URL: world.db.url }) {
  const cleanEnv: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: '/nonexistent-coldtrack-data-dir' };
  delete cleanEnv.DATABASE_URL;
  Object.assign(cleanEnv, env);
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [...nodeArgs('src/cli/audit-verify.ts'), ...args], {
      env: cleanEnv,
      timeout: 60_000,
    });
    return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout.trim(), stderr: failed.stderr.trim() };
  }
}

/** Changes the table behind the guard's back, as only its owner or a superuser can. */
async function tamper(statement: string, values: unknown[] = []) {
  const client = await world.db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('ALTER TABLE token_audit_events DISABLE TRIGGER token_audit_events_append_only');
    await client.query('GRANT UPDATE, DELETE ON token_audit_events TO CURRENT_USER');
    await client.query(statement, values);
    await client.query('REVOKE UPDATE, DELETE ON token_audit_events FROM CURRENT_USER');
    await client.query('ALTER TABLE token_audit_events ENABLE ALWAYS TRIGGER token_audit_events_append_only');
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

const eventAt = async (companyId: number, sequence: number) =>
  (
    await world.db.pool.query<{ id: string }>('SELECT id FROM token_audit_events WHERE company_id = $1 AND sequence = $2', [
      companyId,
      sequence,
    ])
  ).rows[0]!.id;

// company A: 6 events (4 creations, a rotation, a revoke); company B: 2
const tokens: CreatedToken[] = [];
for (let i = 0; i < 4; i++) tokens.push(await world.createToken(a.jwt, { name: `A ${i}` }));
await world.post(a.jwt, `${BASE}/${tokens[0]!.id}/rotate`);
await world.post(a.jwt, `${BASE}/${tokens[1]!.id}/revoke`);
await world.createToken(b.jwt);
await world.createToken(b.jwt);

t.test('an intact chain: exit 0, "chain of N events verified"', async (t) => {
  const run = await verify(['--company', String(a.companyId)]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, new RegExp(`^company ${a.companyId}: chain of 6 events verified \\(head [0-9a-f]{64}\\)$`));
  const empty = await world.db.pool.query<{ id: number }>(
    "INSERT INTO companies (name, country, currency) VALUES ('Quiet Co', 'NG', 'NGN') RETURNING id",
  );
  const quiet = await verify(['--company', String(empty.rows[0]!.id)]);
  t.equal(quiet.code, 0);
  t.match(quiet.stdout, /chain of 0 events verified$/, 'a company without events: an empty chain');
});

const companyIds = async () =>
  (await world.db.pool.query<{ id: number }>('SELECT id FROM companies ORDER BY id')).rows.map((row) => row.id);

t.test('without --company: every company checked, a line each, exit 0 when all hold', async (t) => {
  const ids = await companyIds();
  t.ok(ids.length >= 3, `companies A, B and Quiet Co at least (${ids.length})`);
  const run = await verify([]);
  t.equal(run.code, 0, run.stderr);
  const lines = run.stdout.split('\n');
  t.same(
    lines.slice(0, -1).map((line) => Number(/^company (\d+): chain of \d+ events? verified/.exec(line)?.[1])),
    ids,
    'one "verified" line per company, in id order',
  );
  t.match(
    lines.find((line) => line.startsWith(`company ${a.companyId}:`)),
    /chain of 6 events verified/,
  );
  t.equal(lines.at(-1), `${ids.length} companies checked: every chain verified`);
});

t.test('an event altered by SQL: exit 1, naming it (hash mismatch)', async (t) => {
  const id = await eventAt(a.companyId, 3);
  await tamper("UPDATE token_audit_events SET actor_id = '999' WHERE id = $1", [id]);
  const run = await verify(['--company', String(a.companyId)]);
  t.equal(run.code, 1);
  t.equal(
    run.stdout,
    `company ${a.companyId}: event ${id} (sequence 3) does not fit: hash mismatch: its content is not what was recorded; the 2 events before it fit`,
  );
  const other = await verify(['--company', String(b.companyId)]);
  t.equal(other.code, 0, "company B's chain is its own: still verified");
  t.match(other.stdout, /chain of 2 events verified/);
});

t.test('an event altered with its hash recomputed: the next event no longer names it (prev-hash mismatch)', async (t) => {
  const id = await eventAt(a.companyId, 3);
  await tamper('UPDATE token_audit_events e SET hash = token_audit_event_hash(e) WHERE id = $1', [id]);
  const next = await eventAt(a.companyId, 4);
  const run = await verify(['--company', String(a.companyId)]);
  t.equal(run.code, 1);
  t.match(run.stdout, `event ${next} (sequence 4) does not fit: prev-hash mismatch`);
  t.match(run.stdout, 'the 3 events before it fit');
});

t.test('an event removed: the next one names the gap', async (t) => {
  // the earlier tampering undone first: event 3 as it was recorded, its hash recomputed
  await tamper(`UPDATE token_audit_events e SET actor_id = $2 WHERE id = $1`, [await eventAt(a.companyId, 3), String(a.employeeId)]);
  await tamper('UPDATE token_audit_events e SET hash = token_audit_event_hash(e) WHERE id = $1', [await eventAt(a.companyId, 3)]);
  t.equal((await verify(['--company', String(a.companyId)])).code, 0, 'restored: verified again');
  const next = await eventAt(a.companyId, 6);
  await tamper('DELETE FROM token_audit_events WHERE company_id = $1 AND sequence = 5', [a.companyId]);
  const run = await verify(['--company', String(a.companyId)]);
  t.equal(run.code, 1);
  t.equal(
    run.stdout,
    `company ${a.companyId}: event ${next} (sequence 6) does not fit: gap in sequence: an event before it is missing (expected sequence 5); the 4 events before it fit`,
  );
});

t.test('without --company and a chain broken: every company still checked, the broken one named, exit 1', async (t) => {
  const ids = await companyIds();
  const run = await verify([]);
  t.equal(run.code, 1);
  const lines = run.stdout.split('\n');
  t.equal(lines.length, ids.length + 1, 'a line per company and the summary');
  t.match(
    lines.find((line) => line.startsWith(`company ${a.companyId}:`)),
    /does not fit: gap in sequence/,
    "A's break named",
  );
  t.match(
    lines.find((line) => line.startsWith(`company ${b.companyId}:`)),
    /chain of 2 events verified/,
    'B still checked after it',
  );
  t.equal(lines.filter((line) => / does not fit: /.test(line)).length, 1, 'only A broken');
  t.equal(lines.at(-1), `${ids.length} companies checked: 1 broken (company ${a.companyId})`);
});

t.test('the guard is back after tampering: UPDATE refused again', async (t) => {
  await t.rejects(world.db.pool.query("UPDATE token_audit_events SET actor_id = '1'"), /append-only/);
});

t.test('bad arguments and an unknown company: exit 2; no database: exit 1', async (t) => {
  for (const args of [
    ['--company'],
    ['--company', 'abc'],
    ['--company', '0'],
    ['--company', '99999999999'],
    ['--company', '1', '--all'],
    ['1'],
  ]) {
    const run = await verify(args);
    t.equal(run.code, 2, `${JSON.stringify(args)}: ${run.stderr.split('\n')[0]}`);
    t.match(run.stderr, /usage: npm run audit:verify -- \[--company <company id>\]/);
  }
  for (const id of ['999', '2147483647']) {
    const unknown = await verify(['--company', id]);
    t.equal(unknown.code, 2, `--company ${id}: no such company is a bad argument, not a broken chain`);
    t.match(unknown.stderr, `company ${id}: no such company`);
    t.equal(unknown.stdout, '', 'and no verdict');
  }
  const nowhere = await verify(['--company', '1'], {});
  t.equal(nowhere.code, 1);
  t.match(nowhere.stderr, /Invalid configuration: DATABASE_URL is required for npm run audit:verify/);
});
