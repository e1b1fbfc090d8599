// The metrics the alerting rules (ops/prometheus/alerts.yml) read that the service exports for
// them, each provoked for real: 503s by the dependency that failed (a database nobody answers on,
// a Redis killed under a revoke), the rate limits' fallback while Redis is away and back, the
// pool's size limit, a last_used_at flush that fails on the real database and then succeeds, and
// webhook deliveries to a receiver on a loopback port that keeps failing, and a queue nobody sends.
// (cluster_worker_restarts_total: test/operations/cluster-metrics.test.ts, with a real cluster.)
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createPool } from '../../src/db/pool.js';
import { freePort } from '../../src/free-port.js';
import { RATE_LIMITS } from '../../src/rate-limit/limits.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/webhooks/events.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { DATA_PATH, metricSum, startRedis, until } from '../operations/harness.js';
import { BASE as TOKENS, createWorld, type World } from '../routes/api-tokens/setup.js';

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
  // only the flushes the test asks for: a periodic one (every 30 s by default) landing between the
  // request and the rename, on a machine slow enough, would write the use and leave nothing to fail
  const ctx = await createTestApp(t, { LAST_USED_FLUSH_SECONDS: '3600' });
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

const WEBHOOKS = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_TIMEOUT_SECONDS: '1' };

async function registerEndpoint(world: World, url: string, eventTypes: string[]) {
  const reply = await world.post(world.a.jwt, '/api/v1/webhook-endpoints', { url, event_types: eventTypes });
  if (reply.statusCode !== 201) throw new Error(`register answered ${reply.statusCode}: ${reply.body}`);
  return reply.json<{ id: string }>().id;
}

/** The queue's gauges as a scrape shows them, read from the database now (not in 15 s). */
async function queue(ctx: TestApp) {
  await ctx.app.readWebhookQueue();
  const text = await scrape(ctx);
  return { pending: metricSum(text, 'webhook_deliveries_pending'), oldest: metricSum(text, 'webhook_oldest_due_delivery_age_seconds') };
}

t.test('webhook attempts by outcome, each exported from 0: a receiver answering 500 until the delivery fails for good', async (t) => {
  const world = await createWorld(t, WEBHOOKS);
  const receiver = await startReceiver(t);
  receiver.answer = () => 500;
  const before = await scrape(world);
  for (const outcome of ['succeeded', 'retrying', 'failed', 'interrupted']) {
    t.ok(hasSeries(before, 'webhook_delivery_attempts_total', { outcome }), `outcome ${outcome}: exported at 0 before any attempt`);
  }
  t.equal(metricSum(before, 'webhook_delivery_attempts_total'), 0, 'no attempt yet');
  t.same(await queue(world), { pending: 0, oldest: 0 }, 'an empty queue');

  const endpointId = await registerEndpoint(world, receiver.url, ['api_token.created']);
  await world.createToken(world.a.jwt);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    // each retry's time comes from the clock when the last attempt was recorded: move it after
    if (attempt > 1) world.clock.advance(Math.ceil(RETRY_DELAYS_MS[attempt - 2]! * 1.2));
    await until(
      `attempt ${attempt} counted`,
      async () => metricSum(await scrape(world), 'webhook_delivery_attempts_total') === attempt,
      10_000,
    );
  }
  const text = await scrape(world);
  t.equal(receiver.received.length, MAX_ATTEMPTS, `the receiver was asked ${MAX_ATTEMPTS} times`);
  t.equal(metricSum(text, 'webhook_delivery_attempts_total', { outcome: 'retrying' }), MAX_ATTEMPTS - 1, `${MAX_ATTEMPTS - 1} retrying`);
  t.equal(metricSum(text, 'webhook_delivery_attempts_total', { outcome: 'failed' }), 1, 'then failed, once');
  t.equal(metricSum(text, 'webhook_delivery_attempts_total', { outcome: 'succeeded' }), 0, 'none succeeded');
  t.equal(metricSum(text, 'webhook_delivery_attempts_total', { outcome: 'interrupted' }), 0, 'none interrupted');
  t.equal(metricSum(text, 'webhook_delivery_attempt_duration_seconds_count'), MAX_ATTEMPTS, 'every attempt timed');
  const { rows } = await world.db.pool.query<{ disabled_reason: string | null }>(
    'SELECT disabled_reason FROM webhook_endpoints WHERE id = $1',
    [endpointId],
  );
  t.equal(rows[0]?.disabled_reason, 'failing', 'its endpoint disabled');
  t.same(await queue(world), { pending: 0, oldest: 0 }, 'nothing left in the queue');
});

t.test("a delivery held behind its token's earlier one (the endpoint failing) does not age the queue", async (t) => {
  const world = await createWorld(t, WEBHOOKS);
  const receiver = await startReceiver(t);
  receiver.answer = () => 500;
  await registerEndpoint(world, receiver.url, ['api_token.created', 'api_token.revoked']);
  const token = await world.createToken(world.a.jwt);
  await receiver.waitFor(1);
  await until('the created event retrying', async () => metricSum(await scrape(world), 'webhook_delivery_attempts_total') === 1, 10_000);
  t.equal((await world.post(world.a.jwt, `${TOKENS}/${token.id}/revoke`)).statusCode, 200);
  // the revoke's delivery is due from now on, but waits for the created one (retried 4-6 s
  // later): a wait on the endpoint, not on the sender; the sender polls a few times meanwhile
  world.clock.advance(3_000);
  await sleep(600);
  t.equal(receiver.received.length, 1, 'the revoke is not sent before the created event');
  t.same(await queue(world), { pending: 2, oldest: 0 }, 'two pending; none that a process could send has waited');
});

t.test(
  'deliveries held by their endpoint at its limit of 4 attempts in flight (a receiver not answering) do not age the queue',
  async (t) => {
    const world = await createWorld(t, { ...WEBHOOKS, WEBHOOK_TIMEOUT_SECONDS: '10' });
    const receiver = await startReceiver(t);
    receiver.answer = () => 'hang';
    await registerEndpoint(world, receiver.url, ['api_token.created']);
    // one at a time up to the limit (the deliveries of one claim are not counted against it),
    // then two more
    for (let i = 0; i < 6; i++) {
      await world.createToken(world.a.jwt, { name: `token ${i}` });
      if (i < 4) await receiver.waitFor(i + 1);
    }
    world.clock.advance(3_000);
    await sleep(600);
    t.equal(receiver.received.length, 4, 'four attempts under way, no more');
    t.same(await queue(world), { pending: 6, oldest: 0 }, 'six pending; the two due wait on the endpoint, not on the sender');
  },
);

t.test(
  'WEBHOOK_DELIVERY=off: a process that does not send still reads the queue, whose oldest due delivery ages until one that sends takes it',
  async (t) => {
    const quiet = await createWorld(t, { ...WEBHOOKS, WEBHOOK_DELIVERY: 'off' });
    const receiver = await startReceiver(t);
    await registerEndpoint(quiet, receiver.url, ['api_token.created']);
    await quiet.createToken(quiet.a.jwt);
    quiet.clock.advance(10 * 60_000);
    t.same(await queue(quiet), { pending: 1, oldest: 600 }, 'one delivery, due for 10 minutes');
    t.equal(receiver.received.length, 0, 'nobody sent it');

    // another process of the deployment, sending (its clock is the real one: the delivery is due)
    await (await createTestApp(t, WEBHOOKS, { database: quiet.db })).app.ready();
    await receiver.waitFor(1);
    await until('the delivery recorded as sent', async () => (await queue(quiet)).pending === 0, 10_000);
    t.same(await queue(quiet), { pending: 0, oldest: 0 }, 'drained: nothing waits');
  },
);
