// Conditional requests on the data surface (src/data-surface/conditional-requests.ts): every 200 of
// every data endpoint carries an ETag; If-None-Match naming it is a 304 without a body that the
// rate limit does not count (exactly, across two processes sharing Redis) and the token's usage
// shows as a 304; sensor history's 304 reads no page, and an ingest that lands readings makes its
// ETag stale; credentials, scope and units are checked before any 304, and a tag never crosses
// companies or unit scopes; a spent window refuses a conditional request like any other.
import { Redis } from 'ioredis';
import type { LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import { createPool } from '../../src/db/pool.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createSensorWorld, CSV_HEADER, eachProfile, NOW, type SensorWorld } from '../helpers/sensor-world.js';
import { issueToken } from '../helpers/tokens.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TAG = /^(W\/)?"[A-Za-z0-9_-]{27}"$/;
const WINDOW = 'start_date=2026-03-05&end_date=2026-03-15';
const ANALYTICS = ['users', 'utilization', 'revenue', 'impact'].map((topic) => `/api/v1/analytics/${topic}?${WINDOW}&page_size=5`);
const HISTORY = `/api/v1/sensor-data?${WINDOW}&page_size=50`;
const CHANGES = '/api/v1/sensor-data/changes?page_size=5';
const ENDPOINTS = [...ANALYTICS, HISTORY, CHANGES];

/** The world's loads happened a moment ago: their changes are made older than SETTLE_SECONDS. */
const settle = (world: SensorWorld) => world.db.pool.query("UPDATE sensor_changes SET landed_at = landed_at - interval '1 hour'");

const get = (ctx: TestApp, url: string, headers: Record<string, string>, etag?: string) =>
  ctx.app.inject({ method: 'GET', url, headers: etag === undefined ? headers : { ...headers, 'if-none-match': etag } });

function expectNotModified(t: Test, response: LightMyRequestResponse, etag: string, label: string) {
  t.equal(response.statusCode, 304, `${label}: 304`);
  t.equal(response.body, '', `${label}: no body`);
  t.equal(response.headers['content-type'], undefined, `${label}: no Content-Type`);
  t.equal(response.headers['content-length'], undefined, `${label}: no Content-Length`);
  t.equal(response.headers.etag, etag, `${label}: the ETag again`);
  t.equal(response.headers['cache-control'], 'private, no-cache', `${label}: Cache-Control`);
  t.ok(
    response.headers['x-ratelimit-remaining'] !== undefined && response.headers['x-ratelimit-reset'] !== undefined,
    `${label}: X-RateLimit-*`,
  );
}

t.test('the postgres profile', async (t) => {
  const world = await createSensorWorld(t, 'postgres');
  await settle(world);
  const { a, b } = world;
  const everything = await issueToken(world.ctx, a.employeeId);

  t.test('every data endpoint: a 200 names its answer, and If-None-Match naming it is a 304 without a body', async (t) => {
    for (const url of ENDPOINTS) {
      const first = await get(world.ctx, url, everything.headers);
      t.equal(first.statusCode, 200, `${url}: 200`);
      const etag = String(first.headers.etag);
      t.match(etag, TAG, `${url}: an ETag`);
      t.equal(first.headers['cache-control'], 'private, no-cache', `${url}: Cache-Control`);
      // sensor history names the version of the readings (weak: total_count may lag); the others are exact
      t.equal(etag.startsWith('W/'), url === HISTORY, `${url}: ${url === HISTORY ? 'weak' : 'strong'}`);
      const again = await get(world.ctx, url, everything.headers);
      t.equal(again.headers.etag, etag, `${url}: the same answer, the same ETag`);

      expectNotModified(t, await get(world.ctx, url, everything.headers, etag), etag, `${url} If-None-Match`);
      const opaque = etag.replace(/^W\//, '');
      // weak comparison (RFC 9110): W/ or not, in a list, or *
      expectNotModified(t, await get(world.ctx, url, everything.headers, `W/${opaque}`), etag, `${url} weak form`);
      expectNotModified(t, await get(world.ctx, url, everything.headers, `"elsewhere", ${etag}`), etag, `${url} in a list`);
      expectNotModified(t, await get(world.ctx, url, everything.headers, '*'), etag, `${url} *`);
      const other = await get(world.ctx, url, everything.headers, '"0000000000000000000000000000", W/"elsewhere"');
      t.equal(other.statusCode, 200, `${url}: other tags: 200`);
      t.equal(other.headers.etag, etag, `${url}: with its ETag`);
      t.ok(other.body.length > 0, `${url}: and its body`);
    }
  });

  t.test("sensor history's 304 reads no page: only the version, one statement", async (t) => {
    const texts: string[] = [];
    const readPool = createPool(world.db.url, 2);
    t.teardown(() => readPool.end());
    const query = readPool.query.bind(readPool) as (...args: unknown[]) => unknown;
    readPool.query = ((...args: unknown[]) => {
      const config = args[0];
      texts.push(typeof config === 'string' ? config : (config as { text: string }).text);
      return query(...args);
    }) as typeof readPool.query;
    const ctx = await createTestApp(t, {}, { database: world.db, readPool });
    ctx.clock.set(NOW);
    const first = await get(ctx, HISTORY, everything.headers);
    t.equal(first.statusCode, 200);
    t.ok(
      texts.some((text) => /sensor_readings/.test(text)),
      'a 200 reads the page',
    );
    texts.length = 0;
    expectNotModified(t, await get(ctx, HISTORY, everything.headers, String(first.headers.etag)), String(first.headers.etag), '304');
    t.equal(texts.length, 1, `one statement: ${texts.map((text) => text.slice(0, 60)).join(' | ')}`);
    t.notOk(
      texts.some((text) => /sensor_readings/.test(text)),
      'no page, no count of the history',
    );
    t.match(texts[0], /sensor_changes/, 'the version of the readings');
  });

  t.test('a 304 is not counted against the rate limit, exactly across two processes sharing Redis', async (t) => {
    const one = await createTestApp(t, { REDIS_URL }, { realRateLimits: true, database: world.db });
    const two = await createTestApp(t, { REDIS_URL }, { realRateLimits: true, database: world.db });
    one.clock.set(NOW);
    two.clock.set(NOW);
    const redis = new Redis(REDIS_URL);
    t.teardown(() => redis.quit());
    const token = await issueToken(world.ctx, a.employeeId);
    const counted = async () => Number(await redis.get(`${one.config.redisKeyPrefix}rl:analytics_api_token:${token.id}`));

    for (const url of [HISTORY, ANALYTICS[2]!, CHANGES]) {
      const before = await counted();
      const first = await get(one, url, token.headers);
      t.equal(first.statusCode, 200, `${url}: 200`);
      const remaining = Number(first.headers['x-ratelimit-remaining']);
      t.equal(await counted(), before + 1, `${url}: the 200 is counted in Redis`);
      const etag = String(first.headers.etag);
      for (const [name, ctx] of [
        ['this process', one],
        ['the other process', two],
      ] as const) {
        const notModified = await get(ctx, url, token.headers, etag);
        expectNotModified(t, notModified, etag, `${url} on ${name}`);
        t.equal(Number(notModified.headers['x-ratelimit-remaining']), remaining, `${url} on ${name}: Remaining unchanged`);
        t.equal(notModified.headers['x-ratelimit-reset'], first.headers['x-ratelimit-reset'], `${url} on ${name}: the same window`);
        t.equal(await counted(), before + 1, `${url} on ${name}: Redis's count unchanged`);
      }
      const plain = await get(two, url, token.headers);
      t.equal(Number(plain.headers['x-ratelimit-remaining']), remaining - 1, `${url}: the next request counted is the next one`);
      const stale = await get(two, url, token.headers, '"0000000000000000000000000000"');
      t.equal(stale.statusCode, 200, `${url}: a tag that does not match: 200`);
      t.equal(Number(stale.headers['x-ratelimit-remaining']), remaining - 2, `${url}: and counted`);
      t.equal(await counted(), before + 3, `${url}: three counted in Redis, two 304s not`);
    }
  });

  t.test("the token's usage shows its 304s", async (t) => {
    const ctx = await createTestApp(t, {}, { database: world.db });
    ctx.clock.set(NOW);
    const token = await issueToken(world.ctx, a.employeeId);
    const first = await get(ctx, HISTORY, token.headers);
    const etag = String(first.headers.etag);
    for (let i = 0; i < 3; i++) t.equal((await get(ctx, HISTORY, token.headers, etag)).statusCode, 304);
    const revenue = await get(ctx, ANALYTICS[2]!, token.headers);
    t.equal((await get(ctx, ANALYTICS[2]!, token.headers, String(revenue.headers.etag))).statusCode, 304);
    await ctx.app.lastUsed.flush();
    const usage = await ctx.app.inject({
      method: 'GET',
      url: `/api/v1/api-tokens/${token.id}/usage?from=2026-03-15&to=2026-03-15`,
      headers: { authorization: `Bearer ${await ctx.jwtFor(a.employeeId)}` },
    });
    t.equal(usage.statusCode, 200, usage.body);
    const body = usage.json<{
      requests: number;
      by_class: Record<string, number>;
      by_endpoint: Array<{ endpoint: string; by_class: Record<string, number> }>;
    }>();
    t.strictSame(body.by_class, { '2xx': 2, '304': 4, '4xx': 0, '429': 0, '5xx': 0 });
    t.equal(body.requests, 6, 'a 304 is a request of the token');
    t.strictSame(
      body.by_endpoint.find((entry) => entry.endpoint === '/api/v1/sensor-data')?.by_class,
      { '2xx': 1, '304': 3, '4xx': 0, '429': 0, '5xx': 0 },
      'by route',
    );
  });

  t.test('credentials, scope and units come before any 304; a tag never crosses companies or unit scopes', async (t) => {
    const first = await get(world.ctx, HISTORY, everything.headers);
    const etag = String(first.headers.etag);

    const revoked = await issueToken(world.ctx, a.employeeId);
    const revokedTag = String((await get(world.ctx, HISTORY, revoked.headers)).headers.etag);
    t.equal(revokedTag, etag, 'the same units: the same tag');
    const revoke = await world.ctx.app.inject({
      method: 'POST',
      url: `/api/v1/api-tokens/${revoked.id}/revoke`,
      headers: { authorization: `Bearer ${await world.ctx.jwtFor(a.employeeId)}` },
    });
    t.equal(revoke.statusCode, 200);
    t.equal((await get(world.ctx, HISTORY, revoked.headers, etag)).statusCode, 401, 'a revoked token: 401');
    t.equal((await get(world.ctx, HISTORY, { authorization: 'Bearer ctk_nope' }, etag)).statusCode, 401, 'no valid token: 401');

    const analyticsOnly = await issueToken(world.ctx, a.employeeId, { scopes: ['revenue'] });
    const scoped = await get(world.ctx, HISTORY, analyticsOnly.headers, etag);
    t.equal(scoped.statusCode, 403, 'without the sensor_data scope: 403');
    t.equal(scoped.json<{ error: { code: string } }>().error.code, 'insufficient_scope');

    const one = await issueToken(world.ctx, a.employeeId, { scopes: ['sensor_data'], cooling_unit_ids: [world.a1] });
    const elsewhere = `${HISTORY}&cooling_unit_id=${world.a2}`;
    const unitTag = String((await get(world.ctx, elsewhere, everything.headers)).headers.etag);
    t.equal((await get(world.ctx, elsewhere, one.headers, unitTag)).statusCode, 404, "a unit outside the token's: 404");
    t.equal(
      (await get(world.ctx, `${HISTORY}&cooling_unit_id=${b.unitIds[0]}`, one.headers, unitTag)).statusCode,
      404,
      "another company's unit: 404",
    );

    // the same URL with fewer units readable: another answer, another tag
    const narrow = await get(world.ctx, HISTORY, one.headers, etag);
    t.equal(narrow.statusCode, 200, "a token of fewer units: the company-wide token's tag is not its answer's");
    t.not(narrow.headers.etag, etag);

    const other = await issueToken(world.ctx, b.employeeId);
    for (const url of ENDPOINTS) {
      const ours = String((await get(world.ctx, url, everything.headers)).headers.etag);
      const theirs = await get(world.ctx, url, other.headers, ours);
      t.equal(theirs.statusCode, 200, `${url}: company A's tag is no 304 for company B`);
      t.not(theirs.headers.etag, ours, `${url}: B's answer has a tag of its own`);
    }
  });

  t.test("raw readings the store's retention may drop: the answer's bytes are the validator", async (t) => {
    const raw = `/api/v1/sensor-data?cooling_unit_id=${world.a1}&${WINDOW}&page_size=10`;
    const hourly = `${raw}&aggregation=hourly`;
    t.match(String((await get(world.ctx, raw, everything.headers)).headers.etag), /^W\//, 'no retention: a version');
    // the database's clock is real: readings of March 2026 lie behind a retention of 30 days
    const { behind } = await world.one<{ behind: boolean }>("SELECT now() > '2026-04-05'::timestamptz AS behind");
    t.ok(behind, "the database's clock is past the window plus 30 days");
    await world.db.pool.query("UPDATE sensor_storage SET retention = interval '30 days'");
    t.teardown(() => world.db.pool.query('UPDATE sensor_storage SET retention = NULL'));
    const first = await get(world.ctx, raw, everything.headers);
    const etag = String(first.headers.etag);
    t.match(etag, /^"/, 'strong: no version vouches for readings retention may drop unrecorded');
    expectNotModified(t, await get(world.ctx, raw, everything.headers, etag), etag, 'the same bytes');
    t.match(String((await get(world.ctx, hourly, everything.headers)).headers.etag), /^W\//, 'aggregates are kept: still a version');
  });

  t.test('a spent window: a conditional request is counted and refused 429 like any other, never a free 304', async (t) => {
    const ctx = await createTestApp(t, { REDIS_URL }, { realRateLimits: true, database: world.db });
    ctx.clock.set(NOW);
    const redis = new Redis(REDIS_URL);
    t.teardown(() => redis.quit());
    const token = await issueToken(world.ctx, a.employeeId);
    const counted = async () => Number(await redis.get(`${ctx.config.redisKeyPrefix}rl:analytics_api_token:${token.id}`));
    const first = await get(ctx, HISTORY, token.headers);
    const etag = String(first.headers.etag);
    const revenue = await get(ctx, ANALYTICS[2]!, token.headers);
    const revenueTag = String(revenue.headers.etag);
    // a refusal for its input counts, conditional or not
    const refused = await get(ctx, `${HISTORY}&page_size=0`, token.headers, etag);
    t.equal(refused.statusCode, 400, 'a bad parameter with a matching tag: 400');
    t.equal(refused.headers['x-ratelimit-remaining'], '97', 'and counted');
    t.equal(refused.headers.etag, undefined, 'no ETag on a refusal');
    for (let i = 0; i < 96; i++) await get(ctx, `${HISTORY}&page=2`, token.headers);
    t.equal(await counted(), 99);
    const last = await get(ctx, HISTORY, token.headers, etag);
    expectNotModified(t, last, etag, 'with one request left');
    t.equal(last.headers['x-ratelimit-remaining'], '1');
    t.equal((await get(ctx, `${HISTORY}&page=3`, token.headers)).headers['x-ratelimit-remaining'], '0', 'the 100th counted');
    t.equal(await counted(), 100);

    for (const [url, tag] of [
      [HISTORY, etag],
      [ANALYTICS[2]!, revenueTag],
    ] as const) {
      const spent = await get(ctx, url, token.headers, tag);
      t.equal(spent.statusCode, 429, `${url}: 429, not 304`);
      t.equal(spent.json<{ error: { code: string } }>().error.code, 'rate_limited');
      t.ok(Number(spent.headers['retry-after']) >= 1, 'Retry-After');
      t.equal(spent.headers['x-ratelimit-remaining'], '0');
      t.equal(spent.headers.etag, undefined, 'no ETag');
    }
    t.equal(await counted(), 102, 'both refusals counted, as refused requests are');
  });

  t.test('a window that fills while a conditional request is answered: it is counted then, and refused', async (t) => {
    const ctx = await createTestApp(t, { REDIS_URL }, { realRateLimits: true, database: world.db });
    ctx.clock.set(NOW);
    const redis = new Redis(REDIS_URL);
    t.teardown(() => redis.quit());
    const token = await issueToken(world.ctx, a.employeeId);
    const key = `${ctx.config.redisKeyPrefix}rl:analytics_api_token:${token.id}`;
    for (let i = 0; i < 99; i++) await get(ctx, ANALYTICS[0]!, token.headers);
    // a conditional request that will not be a 304 and a plain one, at once: 101 counted, one refused
    const [conditional, plain] = await Promise.all([
      get(ctx, ANALYTICS[2]!, token.headers, '"0000000000000000000000000000"'),
      get(ctx, ANALYTICS[1]!, token.headers),
    ]);
    t.strictSame(
      [conditional.statusCode, plain.statusCode].sort(),
      [200, 429],
      `one of them refused (${conditional.statusCode}, ${plain.statusCode})`,
    );
    t.equal(Number(await redis.get(key)), 101, 'both counted');
    const refusal = conditional.statusCode === 429 ? conditional : plain;
    t.equal(refusal.json<{ error: { code: string } }>().error.code, 'rate_limited');
    t.equal(refusal.headers.etag, undefined, 'the refusal has no ETag');
  });
});

eachProfile(t, async (t, profile) => {
  const sensors = await createSensorWorld(t, profile);
  await settle(sensors);
  const token = await issueToken(sensors.ctx, sensors.a.employeeId);
  // hourly records 200..299 of unit a1 from 2026-03-05: the hours of 2026-03-09T04:00 to 2026-03-11T05:00
  const url = `/api/v1/sensor-data?cooling_unit_id=${sensors.a1}&${WINDOW}&aggregation=hourly&page_size=100&page=3`;
  const raw = `/api/v1/sensor-data?cooling_unit_id=${sensors.a1}&${WINDOW}&page_size=100&page=3`;
  const first = await get(sensors.ctx, url, token.headers);
  const etag = String(first.headers.etag);
  const rawTag = String((await get(sensors.ctx, raw, token.headers)).headers.etag);
  t.match(etag, /^W\//, 'a version');
  const now = `${CHANGES}&since=now`;
  const feed = await get(sensors.ctx, now, token.headers);
  const feedTag = String(feed.headers.etag);
  const cursorOf = (response: LightMyRequestResponse) =>
    response.json<{ meta: { pagination: { next_cursor: string } } }>().meta.pagination.next_cursor;
  t.equal((await get(sensors.ctx, now, token.headers, feedTag)).statusCode, 304, "the feed's 304");

  // readings of another company's unit land: A's history has not changed, its feed page has (the cursor moves on)
  const other = `${CSV_HEADER}\n${sensors.b.unitIds[0]},TEMPERATURE,2026-03-14T09:00:00Z,4.5\n`;
  t.equal((await sensors.load(other)).inserted, 1);
  t.equal((await get(sensors.ctx, url, token.headers, etag)).statusCode, 304, "another company's readings: still 304");
  const moved = await get(sensors.ctx, now, token.headers, feedTag);
  t.equal(moved.statusCode, 200, "the feed's next_cursor moved on: 200");
  t.not(moved.headers.etag, feedTag);
  t.not(cursorOf(moved), cursorOf(feed));

  // a late reading of unit a1 lands in the window
  const late = `${CSV_HEADER}\n${sensors.a1},TEMPERATURE,2026-03-10T10:07:30Z,5.25\n`;
  t.equal((await sensors.load(late)).inserted, 1);
  const fresh = await get(sensors.ctx, url, token.headers, etag);
  t.equal(fresh.statusCode, 200, 'the old tag after the ingest: 200');
  t.not(fresh.headers.etag, etag, 'with a new ETag');
  // while the load settles the answer's bytes are its validator (aggregates being refreshed, counts cached)
  t.notMatch(String(fresh.headers.etag), /^W\//, 'strong while the load settles');
  const countAt = (response: LightMyRequestResponse) =>
    response
      .json<{ data: Array<{ timestamp: string; specification_type: string; sample_count: number }> }>()
      .data.find((record) => record.timestamp === '2026-03-10T10:00:00Z' && record.specification_type === 'TEMPERATURE')?.sample_count;
  t.equal(countAt(fresh), countAt(first)! + 1, 'the hour the reading landed in has it');
  t.equal((await get(sensors.ctx, url, token.headers, String(fresh.headers.etag))).statusCode, 304, 'the same bytes: 304');
  t.equal((await get(sensors.ctx, raw, token.headers, rawTag)).statusCode, 200, 'raw pages of the unit too');

  await settle(sensors);
  sensors.expired();
  const settled = await get(sensors.ctx, url, token.headers, String(fresh.headers.etag));
  t.equal(settled.statusCode, 200, 'settled: a version again');
  t.match(String(settled.headers.etag), /^W\//);
  t.not(settled.headers.etag, etag, 'not the version before the ingest');
  t.same(settled.json(), fresh.json(), 'the same records');
  t.equal((await get(sensors.ctx, url, token.headers, String(settled.headers.etag))).statusCode, 304);
});
