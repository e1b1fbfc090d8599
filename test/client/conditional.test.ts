// The client's conditional requests (client/src/transport.ts): a data GET sends back the ETag of the
// answer it kept for the URL, and a 304 returns that answer again, a fresh copy each time, leaving
// the token's budget as it was. Only data GETs, only answers with an ETag, a bounded number of
// them. Against a scripted fetch, then the real service, whose 304 the rate limit does not count.
import t from 'tap';
import { ColdtrackClient, RateBudget, type ClientEvent } from '@coldtrack/client';
import { createExportWorld } from './world.js';

const PAGE = {
  data: [{ cooling_unit_id: 7, value: 4.5 }],
  meta: {
    company_id: 1,
    filters: {},
    pagination: { page: 1, page_size: 1000, total_count: 1, total_pages: 1, has_next: false, has_previous: false },
  },
};

interface Sent {
  url: URL;
  ifNoneMatch: string | undefined;
}

/** A service answering 200 with `etagOf(url)` (none when null), or 304 when If-None-Match names it. */
function conditionalFetch(etagOf: (url: URL) => string | null = (url) => `W/"${url.search.length}"`) {
  const sent: Sent[] = [];
  const fetchImpl = (async (input: URL | string, init: RequestInit = {}) => {
    const url = new URL(String(input));
    const ifNoneMatch = (init.headers as Record<string, string>)['if-none-match'];
    sent.push({ url, ifNoneMatch });
    const etag = etagOf(url);
    if (etag !== null && ifNoneMatch === etag) return new Response(null, { status: 304, headers: { etag } });
    return new Response(JSON.stringify(PAGE), {
      status: 200,
      headers: { 'content-type': 'application/json', ...(etag === null ? {} : { etag }) },
    });
  }) as typeof fetch;
  return { fetch: fetchImpl, sent };
}

const client = (fetchImpl: typeof fetch, extra: Partial<ConstructorParameters<typeof ColdtrackClient>[0]> = {}) =>
  new ColdtrackClient({ baseUrl: 'http://partner.test', token: 'ctk_test', fetch: fetchImpl, budget: new RateBudget(), ...extra });

t.test('a data GET asks again with the ETag it kept; a 304 returns the kept answer, a fresh copy', async (t) => {
  const { fetch, sent } = conditionalFetch();
  const events: ClientEvent[] = [];
  const partner = client(fetch, { onEvent: (event) => events.push(event) });
  const first = await partner.sensorData({ cooling_unit_id: 7 });
  first.data[0]!.value = 99; // the caller's copy: the kept answer is not it
  const second = await partner.sensorData({ cooling_unit_id: 7 });
  t.same(second, PAGE, 'the kept answer');
  t.equal(sent[0]!.ifNoneMatch, undefined, 'nothing kept the first time');
  t.equal(sent[1]!.ifNoneMatch, `W/"${sent[1]!.url.search.length}"`, 'the ETag sent back as it came');
  t.same(
    events.filter((event) => event.type === 'response').map((event) => (event as { status: number }).status),
    [200, 304],
  );
  await partner.sensorData({ cooling_unit_id: 8 });
  t.equal(sent[2]!.ifNoneMatch, undefined, 'another query is another URL');
  await partner.sensorDataChanges({ since: 'now' });
  await partner.sensorDataChanges({ since: 'now' });
  t.ok(sent[4]!.ifNoneMatch, 'the change feed too');
  for (const endpoint of ['users', 'utilization', 'revenue', 'impact'] as const) {
    await partner.get(endpoint, { page_size: 5 });
    await partner.get(endpoint, { page_size: 5 });
    t.ok(sent.at(-1)!.ifNoneMatch, `${endpoint}: asked again conditionally`);
  }
});

t.test('only data GETs, only answers with an ETag', async (t) => {
  const { fetch, sent } = conditionalFetch((url) => (url.searchParams.has('cooling_unit_id') ? null : '"tag"'));
  const partner = client(fetch);
  await partner.sensorData({ cooling_unit_id: 7 });
  await partner.sensorData({ cooling_unit_id: 7 });
  t.equal(sent[1]!.ifNoneMatch, undefined, 'an answer without an ETag is not kept');
  await partner.tokens.list();
  await partner.tokens.list();
  await partner.me();
  await partner.me();
  t.same(
    sent.slice(2).map((request) => request.ifNoneMatch),
    [undefined, undefined, undefined, undefined],
    'management GETs are never conditional',
  );
});

t.test('the answers kept are bounded: the least recently used go first; 0 keeps none', async (t) => {
  const { fetch, sent } = conditionalFetch();
  const partner = client(fetch, { conditionalCache: 2 });
  for (const unit of [1, 22, 333]) await partner.sensorData({ cooling_unit_id: unit });
  await partner.sensorData({ cooling_unit_id: 22 });
  t.ok(sent.at(-1)!.ifNoneMatch, 'a recent one is kept');
  await partner.sensorData({ cooling_unit_id: 1 });
  t.equal(sent.at(-1)!.ifNoneMatch, undefined, 'the oldest went when the third came');
  await partner.sensorData({ cooling_unit_id: 333 });
  t.equal(sent.at(-1)!.ifNoneMatch, undefined, 'kept one (22), then 1 again: 333 went');

  const none = conditionalFetch();
  const never = client(none.fetch, { conditionalCache: 0 });
  await never.sensorData({ cooling_unit_id: 7 });
  await never.sensorData({ cooling_unit_id: 7 });
  t.same(
    none.sent.map((request) => request.ifNoneMatch),
    [undefined, undefined],
  );
});

t.test('against the service: the second call is a 304, the same answer, and costs none of the budget', async (t) => {
  const world = await createExportWorld(t, { realRateLimits: true });
  const token = (await world.issue({ scopes: ['sensor_data', 'revenue'] })).token;
  const events: ClientEvent[] = [];
  const partner = new ColdtrackClient({ baseUrl: world.baseUrl, token, onEvent: (event) => events.push(event) });
  const query = { cooling_unit_id: world.unitIds[0]!, start_date: '2025-03-01', end_date: '2025-03-31', aggregation: 'daily' } as const;
  const first = await partner.sensorData(query);
  const remaining = partner.budget.current!.remaining;
  t.equal(first.data.length, 62, 'a month of daily records, both types');
  const second = await partner.sensorData(query);
  t.same(second, first, 'the same answer');
  const revenue = await partner.revenue({ start_date: '2025-03-01', end_date: '2025-03-31', page_size: 5 });
  t.same(await partner.revenue({ start_date: '2025-03-01', end_date: '2025-03-31', page_size: 5 }), revenue);
  const statuses = events.filter((event) => event.type === 'response').map((event) => (event as { status: number }).status);
  t.same(statuses, [200, 304, 200, 304]);
  t.equal(partner.budget.current!.remaining, remaining - 1, 'only the revenue 200 counted after the first call: the 304s cost nothing');
});
