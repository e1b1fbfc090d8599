// Conditional requests (src/data-surface/conditional-requests.ts) while Redis is away: refused (the
// host down) or hung (a TCP proxy that keeps the connections and stops passing bytes), in front of a
// private redis-server. A partner gets what the rate limits' documented fallback gives
// (docs/operations.md, "Outages"): a matching If-None-Match is still a 304, uncounted, with the
// X-RateLimit-* headers of this process's share of the window; a request that is not a 304 is
// counted in that share; a spent share refuses a conditional request 429, never a free 304; never
// a 500, and never a wait past a command timeout or two (500 ms each).
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/redis/connection.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createSensorWorld, NOW } from '../helpers/sensor-world.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { issueToken } from '../helpers/tokens.js';
import { freePort, startRedis, until } from '../operations/harness.js';

const WINDOW = 'start_date=2026-03-05&end_date=2026-03-15';
const URLS = [
  `/api/v1/sensor-data?${WINDOW}&page_size=50`,
  `/api/v1/analytics/revenue?${WINDOW}&page_size=5`,
  '/api/v1/sensor-data/changes?page_size=5',
];
/** The workers the fallback divides the limit by (config.workers). */
const WORKERS = 2;
/** A refused Redis answers at once; a hung one costs the revocation check and the count a timeout each, at most. */
const BOUND_MS = { refused: 1000, hung: 2 * REDIS_COMMAND_TIMEOUT_MS + 1000 };

async function get(app: TestApp, url: string, headers: Record<string, string>, etag?: string) {
  const started = performance.now();
  const response = await app.app.inject({
    method: 'GET',
    url,
    headers: etag === undefined ? headers : { ...headers, 'if-none-match': etag },
  });
  return { response, ms: performance.now() - started };
}
const remaining = (response: LightMyRequestResponse) => Number(response.headers['x-ratelimit-remaining']);

t.test('Redis refused or hung under conditional requests', async (t) => {
  const world = await createSensorWorld(t, 'postgres');
  await world.db.pool.query("UPDATE sensor_changes SET landed_at = landed_at - interval '1 hour'");
  const redis = await startRedis(t);
  const proxy = new TcpProxy(await freePort(), { host: '127.0.0.1', port: redis.port });
  await proxy.open();
  t.teardown(() => proxy.refuse());
  const ctx = await createTestApp(
    t,
    { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, WORKERS: String(WORKERS) },
    { realRateLimits: true, database: world.db },
  );
  ctx.clock.set(NOW);

  for (const outage of ['refused', 'hung'] as const) {
    await t.test(`Redis ${outage}: 304s as documented, counted in this process's share, never a 500 or a long wait`, async (t: Test) => {
      // Redis answers this app again (after the previous outage): its counts are shared
      await until('Redis ready', async () => (await ctx.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200, 10_000, 100);
      const token = await issueToken(world.ctx, world.a.employeeId);
      const tags = new Map<string, string>();
      for (const url of URLS) {
        const { response } = await get(ctx, url, token.headers);
        t.equal(response.statusCode, 200, `Redis up: ${url}`);
        tags.set(url, String(response.headers.etag));
      }
      if (outage === 'refused') await proxy.refuse();
      else await proxy.swallow();
      try {
        let slowest = 0;
        const timed = async (url: string, etag?: string) => {
          const answer = await get(ctx, url, token.headers, etag);
          slowest = Math.max(slowest, answer.ms);
          t.ok(answer.response.statusCode < 500, `${url}: ${answer.response.statusCode}, not a 5xx`);
          return answer.response;
        };
        for (const url of URLS) {
          const notModified = await timed(url, tags.get(url));
          t.equal(notModified.statusCode, 304, `${url}: a matching tag is still a 304`);
          t.equal(notModified.body, '', 'no body');
          t.equal(notModified.headers['x-ratelimit-limit'], '100', 'X-RateLimit-Limit');
          t.ok(notModified.headers['x-ratelimit-remaining'] !== undefined, 'X-RateLimit-Remaining, of the fallback window');
        }
        // this process's share: each request it counts stands for `WORKERS` of the limit
        const first = await timed(URLS[1]!);
        t.equal(first.statusCode, 200);
        const start = remaining(first);
        t.equal(start, 100 - WORKERS, `the first request counted here leaves ${100 - WORKERS} (the limit / ${WORKERS} workers)`);
        for (const url of URLS) t.equal((await timed(url, tags.get(url))).statusCode, 304, `${url}: 304 again`);
        const stale = await timed(URLS[0]!, '"0000000000000000000000000000"');
        t.equal(stale.statusCode, 200, 'a tag that does not match: 200');
        t.equal(remaining(stale), start - WORKERS, 'counted; the 304s between were not');
        // spend the share: a conditional request is then counted and refused, never a free 304
        for (let left = remaining(stale); left > 0; left -= WORKERS) await timed(`${URLS[1]!}&page=2`);
        const spent = await timed(URLS[1]!, tags.get(URLS[1]!));
        t.equal(spent.statusCode, 429, 'the share spent: a matching tag is refused 429');
        t.equal(spent.json<{ error: { code: string } }>().error.code, 'rate_limited');
        t.ok(Number(spent.headers['retry-after']) >= 1, 'with Retry-After');
        t.ok(slowest < BOUND_MS[outage], `no answer waited long (slowest ${Math.round(slowest)} ms, bound ${BOUND_MS[outage]} ms)`);
      } finally {
        await proxy.resume();
      }
    });
  }
});
