// The metrics the alerting rules (ops/prometheus/alerts.yml) read that the service exports for
// them, each provoked for real: 503s by the dependency that failed (a database nobody answers on,
// a Redis killed under a revoke), the rate limits' fallback while Redis is away and back, the
// pool's size limit, and a last_used_at flush that fails on the real database and then succeeds.
// (cluster_worker_restarts_total: test/operations/cluster-metrics.test.ts, with a real cluster.)
import t from 'tap';
import { createPool } from '../../src/db/pool.js';
import { freePort } from '../../src/free-port.js';
import { RATE_LIMITS } from '../../src/rate-limit/limits.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';
import { DATA_PATH, metricSum, startRedis, until } from '../operations/harness.js';

async function scrape(ctx: TestApp) {
  return (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
}

/** Whether the exposition has a sample line of `name` with exactly these labels. */
const hasSeries = (text: string, name: string, labels: Record<string, string>) =>
  text.split('\n').some((line) =>
    line.startsWith(
      `${name}{${Object.entries(labels)
        .map(([key, value]) => `${key}="${value}"`)
        .join(',')}} `,
    ),
  );

t.test('a database nobody answers on: 503s counted as dependency="database"; the pool limit is exported', async (t) => {
  const deadUrl = `postgres://postgres@127.0.0.1:${await freePort()}/nothing`;
  const pool = createPool(deadUrl, 7, { onError: () => {} });
  t.teardown(() => pool.end());
  const ctx = await createTestApp(t, {}, { database: { name: 'nothing', url: deadUrl, pool } });

  const before = await scrape(ctx);
  t.equal(metricSum(before, 'unavailable_responses_total', { dependency: 'database' }), 0, 'database series present at 0 before any 503');
  t.equal(metricSum(before, 'unavailable_responses_total', { dependency: 'redis' }), 0, 'redis series present at 0');
  t.equal(metricSum(before, 'db_pool_max_connections'), 7, "db_pool_max_connections: the pool's max");
  t.ok(
    hasSeries(before, 'unavailable_responses_total', { dependency: 'database' }) &&
      hasSeries(before, 'unavailable_responses_total', { dependency: 'redis' }),
    'both unavailable_responses_total series exported before any 503',
  );

  const jwt = await ctx.jwtFor(1);
  for (let i = 0; i < 3; i++) {
    const reply = await ctx.app.inject({ method: 'GET', url: '/api/v1/api-tokens', headers: { authorization: `Bearer ${jwt}` } });
    t.equal(reply.statusCode, 503, `request ${i}: 503`);
    t.equal(reply.json().error.code, 'unavailable', 'the client sees only "unavailable"');
    t.notMatch(reply.body, /database/, 'and not which dependency');
  }
  const after = await scrape(ctx);
  t.equal(metricSum(after, 'unavailable_responses_total', { dependency: 'database' }), 3, 'three 503s counted against the database');
  t.equal(metricSum(after, 'unavailable_responses_total', { dependency: 'redis' }), 0, 'none against Redis');
  t.equal(
    metricSum(after, 'http_request_duration_seconds_count', { route: '/api/v1/api-tokens', status: '503' }),
    3,
    'the same requests in http_request_duration_seconds with status 503',
  );
});

t.test('rate-limit rejections: every scope exported at 0 from the start, a 429 counted under its scope', async (t) => {
  const ctx = await createTestApp(t, {}, { realRateLimits: true });
  let text = await scrape(ctx);
  for (const scope of Object.keys(RATE_LIMITS)) {
    t.ok(hasSeries(text, 'rate_limit_rejections_total', { scope }), `${scope}: exported`);
    t.equal(metricSum(text, 'rate_limit_rejections_total', { scope }), 0, `${scope}: 0`);
  }
  t.ok(
    hasSeries(text, 'api_token_cache_lookups_total', { result: 'hit' }) &&
      hasSeries(text, 'api_token_cache_lookups_total', { result: 'miss' }),
    "token cache hits and misses exported at 0 (the dashboard's hit ratio has both sides)",
  );
  const { max } = RATE_LIMITS.validate_cooling_user_id_ip;
  const statuses: number[] = [];
  for (let i = 0; i <= max; i++) {
    statuses.push((await ctx.app.inject({ method: 'POST', url: '/v1/users/validate-cooling-user-id/', payload: {} })).statusCode);
  }
  t.equal(statuses.at(-1), 429, `request ${max + 1} refused`);
  text = await scrape(ctx);
  t.equal(metricSum(text, 'rate_limit_rejections_total', { scope: 'validate_cooling_user_id_ip' }), 1, 'counted under its scope');
  t.equal(metricSum(text, 'rate_limit_rejections_total'), 1, 'and nowhere else');
});

t.test('Redis killed and back: the fallback gauge follows it; a revoke refused is counted as dependency="redis"', async (t) => {
  const redis = await startRedis(t);
  const ctx = await createTestApp(t, { REDIS_URL: redis.url });
  const acme = await createCompany(ctx.db.pool, 'Acme');
  const { id, headers } = await issueToken(ctx, acme.employeeId);
  const data = () => ctx.app.inject({ method: 'GET', url: DATA_PATH, headers });

  t.equal((await data()).statusCode, 200, 'served with Redis up');
  let text = await scrape(ctx);
  t.equal(metricSum(text, 'rate_limit_redis_fallback_active'), 0, 'fallback inactive');
  t.equal(metricSum(text, 'rate_limit_redis_fallbacks_total'), 0);

  await redis.kill();
  // the client notices the closed socket at once; a request in between is answered from Redis
  await until(
    'a request counted by the fallback',
    async () => {
      await data();
      return metricSum(await scrape(ctx), 'rate_limit_redis_fallback_active') === 1;
    },
    10_000,
    100,
  );
  t.equal((await data()).statusCode, 200, 'data still served without Redis');
  text = await scrape(ctx);
  t.equal(metricSum(text, 'rate_limit_redis_fallback_active'), 1, 'fallback active while Redis is away');
  t.equal(metricSum(text, 'rate_limit_redis_fallbacks_total'), 1, 'and counted once');

  const jwt = await ctx.jwtFor(acme.employeeId);
  const revoke = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/api-tokens/${id}/revoke`,
    headers: { authorization: `Bearer ${jwt}` },
  });
  t.equal(revoke.statusCode, 503, 'a revoke without Redis is refused');
  text = await scrape(ctx);
  t.equal(metricSum(text, 'unavailable_responses_total', { dependency: 'redis' }), 1, 'counted against Redis');
  t.equal(metricSum(text, 'unavailable_responses_total', { dependency: 'database' }), 0, 'not against the database');

  await redis.start();
  await until(
    'the fallback to clear once Redis answers',
    async () => {
      await data();
      return metricSum(await scrape(ctx), 'rate_limit_redis_fallback_active') === 0;
    },
    15_000,
    200,
  );
  t.pass('fallback inactive again once a request found Redis answering');
  t.equal(metricSum(await scrape(ctx), 'rate_limit_redis_fallbacks_total'), 1, 'the counter keeps the one fallback');
});

t.test('a last_used_at flush the database refuses is counted; the next one writes and is not', async (t) => {
  const ctx = await createTestApp(t);
  const acme = await createCompany(ctx.db.pool, 'Acme');
  const { id, headers } = await issueToken(ctx, acme.employeeId);
  const failures = async () => metricSum(await scrape(ctx), 'last_used_flush_failures_total');
  t.equal(await failures(), 0, 'no failure yet (the series is there at 0)');

  t.equal((await ctx.app.inject({ method: 'GET', url: DATA_PATH, headers })).statusCode, 200, 'the token used');
  t.equal(ctx.app.lastUsed.pendingCount(), 1, 'its use waits for the flush');
  // the table the flush writes is gone (renamed) while it runs: a real failed UPDATE
  await ctx.db.pool.query('ALTER TABLE api_tokens RENAME TO api_tokens_away');
  try {
    await ctx.app.lastUsed.flush();
  } finally {
    await ctx.db.pool.query('ALTER TABLE api_tokens_away RENAME TO api_tokens');
  }
  t.equal(await failures(), 1, 'last_used_flush_failures_total 1');
  t.equal(ctx.app.lastUsed.pendingCount(), 1, 'the use is kept for the next flush');
  t.ok(
    ctx.logs.some((line) => line.includes('last_used_at flush failed')),
    'and logged',
  );

  await ctx.app.lastUsed.flush();
  t.equal(await failures(), 1, 'a successful flush adds nothing');
  t.equal(ctx.app.lastUsed.pendingCount(), 0, 'nothing pending');
  const { rows } = await ctx.db.pool.query<{ used: boolean }>('SELECT last_used_at IS NOT NULL AS used FROM api_tokens WHERE id = $1', [
    id,
  ]);
  t.equal(rows[0]?.used, true, 'last_used_at written');
});
