// GET /healthz (the process is alive) and GET /readyz (every dependency answers: the database,
// a read replica and Redis when configured), outside the rate limits.
import t from 'tap';
import { createPool } from '../../src/db/pool.js';
import { freePort } from '../../src/free-port.js';
import { createTestApp } from '../helpers/app.js';

t.test('healthz and readyz with the database up', async (t) => {
  const ctx = await createTestApp(t, {}, { realRateLimits: true });
  const health = await ctx.app.inject({ method: 'GET', url: '/healthz' });
  t.equal(health.statusCode, 200);
  t.same(health.json(), { status: 'ok' });
  const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200);
  t.same(ready.json(), { status: 'ready', checks: { database: 'ok' } }, 'no Redis, no replica: the database only');
  // probes are not rate limited: more than the public budget of 120 a minute
  const statuses = new Set<number>();
  for (let i = 0; i < 130; i++) statuses.add((await ctx.app.inject({ method: 'GET', url: '/readyz', remoteAddress: '198.51.100.1' })).statusCode);
  t.same([...statuses], [200], '130 probes from one address, never 429');
});

t.test('readyz with Redis configured checks it', async (t) => {
  const ctx = await createTestApp(t, { REDIS_URL: 'redis://127.0.0.1:6379' });
  const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
  t.same(ready.json(), { status: 'ready', checks: { database: 'ok', redis: 'ok' } });
});

t.test('readyz is 503 when a read replica cannot answer, naming it', async (t) => {
  const replica = createPool(`postgres://postgres@127.0.0.1:${await freePort()}/nothing`, 1);
  t.teardown(() => replica.end());
  const ctx = await createTestApp(t, {}, { readPool: replica });
  const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 503);
  t.same(ready.json(), { status: 'unavailable', checks: { database: 'ok', read_replica: 'unreachable' } });
  t.ok(Number(ready.headers['retry-after']) > 0, 'Retry-After');
  t.equal((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'the process itself is alive');
});
