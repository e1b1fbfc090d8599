// token_audit_events is append-only by the database's own rules, not only because the code never
// asks: UPDATE, DELETE and TRUNCATE fail (even naming no row, even under session_replication_role
// = replica, which silences ordinary triggers, even from a superuser, as this test's connection
// is), the owner holds none of those privileges, and an insert cannot choose its place in the
// chain: sequence, prev_hash and hash are the trigger's, whatever the insert says.
import t from 'tap';
import type pg from 'pg';
import { verifyChain } from '../../src/audit/verify.js';
import { createTestDatabase } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';

const db = await createTestDatabase(t);
const company = await createCompany(db.pool, 'Ledger Co');

const insertEvent = (client: Pick<pg.Pool, 'query'>, extra = '', values: unknown[] = []) =>
  client.query(
    `INSERT INTO token_audit_events (company_id, occurred_at, action, token_id, actor_type, actor_id${extra ? ', sequence, prev_hash, hash' : ''})
     VALUES ($1, now(), 'token.created', gen_random_uuid(), 'employee', $2${extra})`,
    [company.companyId, String(company.employeeId), ...values],
  );
await insertEvent(db.pool);
await insertEvent(db.pool);
const snapshot = async () => (await db.pool.query('SELECT * FROM token_audit_events ORDER BY id')).rows;
const original = await snapshot();

const REFUSED = /token_audit_events is append-only: (UPDATE|DELETE|TRUNCATE) is refused/;

t.test('UPDATE, DELETE and TRUNCATE are refused, whatever they name', async (t) => {
  for (const statement of [
    "UPDATE token_audit_events SET actor_id = '999'",
    'UPDATE token_audit_events SET details = \'{"x": 1}\' WHERE sequence = 2',
    'UPDATE token_audit_events SET actor_id = actor_id WHERE false',
    'DELETE FROM token_audit_events',
    'DELETE FROM token_audit_events WHERE sequence = 1',
    'DELETE FROM token_audit_events WHERE false',
    'TRUNCATE token_audit_events',
    'TRUNCATE companies CASCADE',
    `INSERT INTO token_audit_events (id, company_id, occurred_at, action, token_id, actor_type, actor_id)
     OVERRIDING SYSTEM VALUE SELECT id, company_id, occurred_at, action, token_id, actor_type, actor_id FROM token_audit_events
     ON CONFLICT (id) DO UPDATE SET actor_id = '999'`,
  ]) {
    await t.rejects(db.pool.query(statement), REFUSED, statement.replace(/\s+/g, ' ').slice(0, 90));
  }
  t.strictSame(await snapshot(), original, 'every event as it was');
});

t.test('session_replication_role = replica does not switch the guard off', async (t) => {
  const client = await db.pool.connect();
  try {
    await client.query('SET session_replication_role = replica');
    await t.rejects(client.query("UPDATE token_audit_events SET actor_id = '999'"), REFUSED);
    await t.rejects(client.query('DELETE FROM token_audit_events'), REFUSED);
  } finally {
    await client.query('RESET session_replication_role');
    client.release();
  }
  t.strictSame(await snapshot(), original);
});

t.test("the table's owner holds no UPDATE, DELETE or TRUNCATE privilege on it", async (t) => {
  const { rows } = await db.pool.query<{ privilege: string }>(
    `SELECT a.privilege_type AS privilege
     FROM pg_class c, aclexplode(c.relacl) a
     WHERE c.oid = 'token_audit_events'::regclass AND a.grantee = c.relowner ORDER BY 1`,
  );
  const held = rows.map((row) => row.privilege);
  t.ok(held.includes('INSERT') && held.includes('SELECT'), `the owner inserts and reads (${held.join(', ')})`);
  for (const privilege of ['UPDATE', 'DELETE', 'TRUNCATE']) t.notOk(held.includes(privilege), `no ${privilege}`);
  const { rows: publicRows } = await db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = 'token_audit_events'::regclass AND a.grantee = 0",
  );
  t.equal(publicRows[0]!.n, 0, 'PUBLIC holds nothing');
});

t.test('an insert cannot choose its sequence or hashes: the trigger chains it', async (t) => {
  const forged = Buffer.alloc(32, 7);
  await insertEvent(db.pool, ', $3, $4, $4', [1, forged]);
  const { rows } = await db.pool.query<{ sequence: string; prev_hash: Buffer; hash: Buffer }>(
    'SELECT sequence, prev_hash, hash FROM token_audit_events ORDER BY sequence DESC LIMIT 2',
  );
  t.equal(rows[0]!.sequence, '3', 'sequence 3, not the 1 it asked for');
  t.ok(rows[0]!.prev_hash.equals(rows[1]!.hash), "prev_hash: the previous event's hash, not the forged one");
  t.notOk(rows[0]!.hash.equals(forged), 'hash: computed, not the forged one');
  t.match(await verifyChain(db.pool, company.companyId), { ok: true, events: 3 });
});

t.test('what the table refuses outright: unknown actions and actors, a bad employee id, details not an object', async (t) => {
  const cases: Array<[string, { action: string; actorType: string; actorId: string; details: string; related?: boolean }]> = [
    ['an unknown action', { action: 'token.deleted', actorType: 'employee', actorId: '1', details: '{}' }],
    ['an unknown actor type', { action: 'token.created', actorType: 'robot', actorId: '1', details: '{}' }],
    ['an employee actor that is not a user id', { action: 'token.created', actorType: 'employee', actorId: 'alice', details: '{}' }],
    ['details that are not an object', { action: 'token.created', actorType: 'employee', actorId: '1', details: '[1]' }],
    [
      'a token named as its own replacement',
      { action: 'token.rotated', actorType: 'employee', actorId: '1', details: '{}', related: true },
    ],
  ];
  const tokenId = '00000000-0000-4000-8000-000000000001';
  for (const [label, event] of cases) {
    await t.rejects(
      db.pool.query(
        `INSERT INTO token_audit_events (company_id, occurred_at, action, token_id, related_token_id, actor_type, actor_id, details)
         VALUES ($1, now(), $2, $3, $4, $5, $6, $7)`,
        [company.companyId, event.action, tokenId, event.related ? tokenId : null, event.actorType, event.actorId, event.details],
      ),
      { code: '23514' },
      `${label}: a check violation`,
    );
  }
  t.strictSame((await snapshot()).length, 3, 'nothing added');
});
