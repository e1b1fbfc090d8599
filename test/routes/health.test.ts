// GET /healthz (the process is alive) and GET /readyz (the database and Redis when configured
// answer; a read replica that does not makes it "degraded", still 200), outside the rate limits.
import { pino } from 'pino';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { createPool } from '../../src/db/pool.js';
import { freePort } from '../../src/free-port.js';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

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
  for (let i = 0; i < 130; i++)
    statuses.add((await ctx.app.inject({ method: 'GET', url: '/readyz', remoteAddress: '198.51.100.1' })).statusCode);
  t.same([...statuses], [200], '130 probes from one address, never 429');
});

t.test('readyz with Redis configured checks it', async (t) => {
  const ctx = await createTestApp(t, { REDIS_URL: 'redis://127.0.0.1:6379' });
  const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
  t.same(ready.json(), { status: 'ready', checks: { database: 'ok', redis: 'ok' } });
});

t.test('a read replica that cannot answer: readyz 200 "degraded" naming it, and data reads go to the primary', async (t) => {
  const replica = createPool(`postgres://postgres@127.0.0.1:${await freePort()}/nothing`, 1);
  t.teardown(() => replica.end());
  const ctx = await createTestApp(t, {}, { readPool: replica });
  const ready = await ctx.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200, 'still in the load balancer: this instance serves everything');
  t.same(ready.json(), { status: 'degraded', checks: { database: 'ok', read_replica: 'unreachable' } });
  t.equal(ctx.app.readRouting.state(), 'lost', 'the probe told the routing');
  const company = await createCompany(ctx.db.pool, 'Degraded Co');
  const { headers } = await issueToken(ctx, company.employeeId);
  const page = await ctx.app.inject({ method: 'GET', url: '/api/v1/analytics/utilization?page_size=5', headers });
  t.equal(page.statusCode, 200, `a data page from the primary: ${page.statusCode === 200 ? 'answered' : page.body}`);
  t.equal((await ctx.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'the process itself is alive');
});

t.test('readyz is 503 when the primary cannot answer, a replica or not', async (t) => {
  const ctx = await createTestApp(t);
  const unreachable = createPool(`postgres://postgres@127.0.0.1:${await freePort()}/nothing`, 1);
  t.teardown(() => unreachable.end());
  const app = await buildApp({ config: ctx.app.config, pool: unreachable, readPool: ctx.db.pool, logger: pino({ level: 'silent' }) });
  t.teardown(() => app.close());
  const ready = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 503);
  t.same(ready.json(), { status: 'unavailable', checks: { database: 'unreachable', read_replica: 'ok' } });
  t.ok(Number(ready.headers['retry-after']) > 0, 'Retry-After');
});
