// The audit trail from the token routes' side: every create, rotate and revoke leaves exactly one
// event, naming the employee who acted (not the token's creator) and the client IP; a call that
// changes nothing (a repeated revoke, a refusal, another company's token, a read, a data request)
// leaves none; a revoke or rotation that answered 503 left none either (the event commits with
// the change or not at all); and concurrent actions of one company never fork its chain.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { verifyChain } from '../../../src/audit/verify.js';
import { startRedis } from '../../operations/harness.js';
import { eventCount, eventRows } from '../audit-events/setup.js';
import { BASE, createWorld, type CreatedToken } from './setup.js';

const world = await createWorld(t, { TRUST_PROXY: '127.0.0.1' });
const { a, b } = world;
const pool = world.db.pool;
// a second employee of company A: the one who rotates and revokes A's tokens below
const {
  rows: [second],
} = await pool.query<{ id: number }>(
  "INSERT INTO users (role, company_id, first_name, last_name) VALUES ('REGISTERED_EMPLOYEE', $1, 'Second', 'Employee') RETURNING id",
  [a.companyId],
);
const secondJwt = await world.jwtFor(second!.id, { ttlSeconds: 30 * 24 * 3600 });
const via = (ip: string) => ({ 'x-forwarded-for': ip });

/** Runs `action` and returns the events it added (all companies). */
async function eventsAddedBy(action: () => Promise<unknown>) {
  const before = await eventRows(pool);
  await action();
  const after = await eventRows(pool);
  const known = new Set(before.map((row) => row.id));
  return after.filter((row) => !known.has(row.id));
}

t.test('create, rotate and revoke: one event each, with the actor who acted and their IP', async (t) => {
  let token!: CreatedToken;
  const createdEvents = await eventsAddedBy(async () => {
    token = await world.createToken(a.jwt, { name: 'one each' });
  });
  t.equal(createdEvents.length, 1, 'create: one event');
  t.match(createdEvents[0], {
    company_id: a.companyId,
    action: 'token.created',
    token_id: token.id,
    actor_type: 'employee',
    actor_id: String(a.employeeId),
    client_ip: '127.0.0.1',
  });

  let replacement!: CreatedToken;
  const rotatedEvents = await eventsAddedBy(async () => {
    const response = await world.post(secondJwt, `${BASE}/${token.id}/rotate`, { grace_period_seconds: 60 }, via('203.0.113.20'));
    t.equal(response.statusCode, 201);
    replacement = response.json<CreatedToken>();
  });
  t.equal(rotatedEvents.length, 1, 'rotate: one event (not a creation besides)');
  t.match(rotatedEvents[0], {
    action: 'token.rotated',
    token_id: token.id,
    related_token_id: replacement.id,
    actor_id: String(second!.id),
    client_ip: '203.0.113.20',
  });

  const revokedEvents = await eventsAddedBy(async () => {
    t.equal((await world.post(secondJwt, `${BASE}/${replacement.id}/revoke`, undefined, via('203.0.113.21'))).statusCode, 200);
  });
  t.equal(revokedEvents.length, 1, 'revoke: one event');
  t.match(revokedEvents[0], {
    action: 'token.revoked',
    token_id: replacement.id,
    related_token_id: null,
    actor_id: String(second!.id),
    client_ip: '203.0.113.21',
  });

  const expiring = await world.createToken(a.jwt, { expires_at: new Date(world.clock.now().getTime() + 60_000).toISOString() });
  world.clock.advance(60_000);
  const expiredRevoke = await eventsAddedBy(() => world.post(a.jwt, `${BASE}/${expiring.id}/revoke`));
  t.strictSame(
    expiredRevoke.map((row) => row.action),
    ['token.revoked'],
    'revoking an expired token changes it: one event',
  );
});

t.test('calls that change nothing leave no event', async (t) => {
  const token = await world.createToken(a.jwt, { name: 'unchanged' });
  const revoked = await world.createToken(a.jwt, { name: 'revoked once' });
  await world.post(a.jwt, `${BASE}/${revoked.id}/revoke`);
  const { token: raw } = token;
  const calls: Array<[string, () => Promise<{ statusCode: number }>, number]> = [
    ['a repeated revoke (idempotent, 200)', () => world.post(a.jwt, `${BASE}/${revoked.id}/revoke`), 200],
    ['rotating a revoked token (409)', () => world.post(a.jwt, `${BASE}/${revoked.id}/rotate`), 409],
    ['rotating an unknown token (404)', () => world.post(a.jwt, `${BASE}/00000000-0000-4000-8000-000000000000/rotate`), 404],
    ['a create refused (400)', () => world.post(a.jwt, BASE, { name: 'x', scopes: ['nope'] }), 400],
    [
      "a create with another company's unit (400)",
      () => world.post(a.jwt, BASE, { name: 'x', scopes: ['users'], cooling_unit_ids: [b.unitIds[0]] }),
      400,
    ],
    ["company B revoking A's token (404)", () => world.post(b.jwt, `${BASE}/${token.id}/revoke`), 404],
    ["company B rotating A's token (404)", () => world.post(b.jwt, `${BASE}/${token.id}/rotate`), 404],
    ['an operator creating (403)', async () => world.post(await world.jwtFor(a.operatorId), BASE, { name: 'x', scopes: ['users'] }), 403],
    ['no JWT (401)', () => world.post(null, BASE, { name: 'x', scopes: ['users'] }), 401],
    [
      'list, retrieve and the audit list itself',
      async () => {
        await world.get(a.jwt, BASE);
        await world.get(a.jwt, '/api/v1/audit-events');
        return world.get(a.jwt, `${BASE}/${token.id}`);
      },
      200,
    ],
    ['a data request with the token (the hot path writes no event)', () => world.get(raw, '/api/v1/analytics/users'), 200],
  ];
  for (const [label, call, status] of calls) {
    const added = await eventsAddedBy(async () => t.equal((await call()).statusCode, status, `${label}: ${status}`));
    t.strictSame(added, [], `${label}: no event`);
  }
});

t.test('concurrent actions of one company never fork its chain', async (t) => {
  const created = await Promise.all([
    ...Array.from({ length: 16 }, (_, i) => world.createToken(a.jwt, { name: `burst A ${i}` })),
    ...Array.from({ length: 8 }, (_, i) => world.createToken(b.jwt, { name: `burst B ${i}` })),
  ]);
  await Promise.all(
    created.slice(0, 6).map((token) => world.post(token.company_id === a.companyId ? a.jwt : b.jwt, `${BASE}/${token.id}/revoke`)),
  );
  for (const company of [a, b]) {
    const rows = await eventRows(pool, company.companyId);
    t.strictSame(
      rows.map((row) => Number(row.sequence)),
      rows.map((_, i) => i + 1),
      `company ${company.companyId}: sequences 1..${rows.length}, no gap, no repeat`,
    );
    t.match(
      await verifyChain(pool, company.companyId),
      { ok: true, events: rows.length },
      `company ${company.companyId}: the chain verifies`,
    );
  }
});

t.test('a revoke or rotation that answered 503 recorded nothing; once it succeeds, one event', async (t) => {
  const redis = await startRedis(t);
  const shared = await createWorld(t, { REDIS_URL: redis.url });
  const token = await shared.createToken(shared.a.jwt, { name: 'outage' });
  const count = await eventCount(shared.db.pool);
  await redis.kill();
  const revoke = await shared.post(shared.a.jwt, `${BASE}/${token.id}/revoke`);
  t.equal(revoke.statusCode, 503, `revoke with Redis down: ${revoke.body}`);
  const rotate = await shared.post(shared.a.jwt, `${BASE}/${token.id}/rotate`);
  t.equal(rotate.statusCode, 503, 'rotate with Redis down');
  t.equal(await eventCount(shared.db.pool), count, 'no event for either');
  t.equal(await shared.tokenCount(), 1, 'no replacement either');

  await redis.start();
  let status = 0;
  for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
    status = (await shared.post(shared.a.jwt, `${BASE}/${token.id}/revoke`)).statusCode;
    if (status !== 200) await sleep(100);
  }
  t.equal(status, 200, 'revoked once Redis is back');
  t.strictSame(
    (await eventRows(shared.db.pool)).slice(count).map((row) => row.action),
    ['token.revoked'],
    'exactly one event, the revoke that committed',
  );
});
