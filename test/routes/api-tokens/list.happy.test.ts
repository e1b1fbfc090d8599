// GET /api/v1/api-tokens: the data endpoints' paginated envelope, newest first, filterable by
// state; the state is computed at the app clock's instant, to the second.
import t from 'tap';
import { API_TOKEN_KEYS, BASE, createWorld, type ApiTokenJson, type CreatedToken, type ListJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;

const list = async (jwt: string, query = '') => {
  const response = await world.get(jwt, `${BASE}${query}`);
  if (response.statusCode !== 200) throw new Error(`list answered ${response.statusCode}: ${response.body}`);
  return response.json<ListJson>();
};
const ids = (page: ListJson) => page.data.map((token) => token.id);

// company A: seven tokens, one a minute apart; company B: one of its own
const created: CreatedToken[] = [];
for (let i = 0; i < 7; i++) {
  created.push(await world.createToken(a.jwt, { name: `token ${i}`, scopes: ['users', 'impact'] }));
  world.clock.advance(60_000);
}
const bToken = await world.createToken(b.jwt, { name: 'B only' });
const newestFirst = [...created].reverse().map((token) => token.id);

t.test('no tokens yet: an empty page in the full envelope', async (t) => {
  const fresh = await createWorld(t);
  const response = await fresh.get(fresh.a.jwt, BASE);
  t.equal(response.statusCode, 200);
  t.match(response.headers['content-type'], /^application\/json/);
  t.strictSame(response.json(), {
    data: [],
    meta: {
      company_id: fresh.a.companyId,
      filters: { state: null },
      pagination: { page: 1, page_size: 100, total_count: 0, total_pages: 0, has_next: false, has_previous: false },
    },
  });
});

t.test('newest first, every field but the raw token, only the caller’s company', async (t) => {
  const page = await list(a.jwt);
  t.strictSame(ids(page), newestFirst);
  for (const [index, record] of page.data.entries()) {
    t.strictSame(Object.keys(record).sort(), [...API_TOKEN_KEYS].sort(), `record ${index}: fields`);
    const { token, ...metadata } = created[created.length - 1 - index]!;
    t.ok(token);
    t.strictSame(record, metadata, `record ${index}: same as at creation`);
  }
  t.notOk(ids(page).includes(bToken.id), 'B’s token is not in A’s list');
  t.equal(page.meta.company_id, a.companyId);
  t.strictSame(page.meta.pagination, { page: 1, page_size: 100, total_count: 7, total_pages: 1, has_next: false, has_previous: false });

  const pageOfB = await list(b.jwt);
  t.strictSame(ids(pageOfB), [bToken.id]);
  t.equal(pageOfB.meta.company_id, b.companyId);
});

t.test('walking the pages adds up: every token once, in order, with consistent flags', async (t) => {
  const seen: string[] = [];
  let pageNumber = 1;
  for (;;) {
    const page = await list(a.jwt, `?page=${pageNumber}&page_size=3`);
    t.strictSame(
      page.meta.pagination,
      {
        page: pageNumber,
        page_size: 3,
        total_count: 7,
        total_pages: 3,
        has_next: pageNumber < 3,
        has_previous: pageNumber > 1,
      },
      `page ${pageNumber}`,
    );
    t.equal(page.data.length, pageNumber < 3 ? 3 : 1);
    seen.push(...ids(page));
    if (!page.meta.pagination.has_next) break;
    pageNumber += 1;
  }
  t.equal(pageNumber, 3);
  t.strictSame(seen, newestFirst, 'the concatenated pages are the full list, no duplicates');
});

t.test('page_size 1 and page_size 1000', async (t) => {
  const single = await list(a.jwt, '?page=7&page_size=1');
  t.strictSame(ids(single), [newestFirst[6]]);
  t.match(single.meta.pagination, { total_pages: 7, has_next: false, has_previous: true });
  const big = await list(a.jwt, '?page_size=1000');
  t.equal(big.data.length, 7);
  t.equal(big.meta.pagination.page_size, 1000);
});

t.test('a page past the last is 200 with empty data', async (t) => {
  const page = await list(a.jwt, '?page=4&page_size=3');
  t.strictSame(page.data, []);
  t.strictSame(page.meta.pagination, { page: 4, page_size: 3, total_count: 7, total_pages: 3, has_next: false, has_previous: true });
  const far = await list(a.jwt, '?page=2147483647&page_size=1000');
  t.strictSame(far.data, [], 'the largest page number is still a plain empty page');
  t.equal(far.meta.pagination.page, 2147483647);
});

t.test('tokens created in the same instant still page without duplicates or gaps', async (t) => {
  const tied = await createWorld(t);
  const made: string[] = [];
  for (let i = 0; i < 9; i++) made.push((await tied.createToken(tied.a.jwt, { name: `same instant ${i}` })).id);
  const seen: string[] = [];
  for (let page = 1; page <= 4; page++) {
    const response = await tied.get(tied.a.jwt, `${BASE}?page=${page}&page_size=2`);
    seen.push(...response.json<ListJson>().data.map((token) => token.id));
  }
  t.equal(seen.length, 8);
  const last = (await tied.get(tied.a.jwt, `${BASE}?page=5&page_size=2`)).json<ListJson>();
  seen.push(...ids(last));
  t.equal(new Set(seen).size, 9, 'no duplicates');
  t.strictSame([...seen].sort(), [...made].sort(), 'every token once');
  const again = (await tied.get(tied.a.jwt, `${BASE}?page_size=100`)).json<ListJson>();
  t.strictSame(ids(again), seen, 'the order is stable between calls');
});

t.test('state filter: active, expired, revoked, echoed in meta.filters', async (t) => {
  const s = await createWorld(t);
  const start = s.clock.now();
  const forever = await s.createToken(s.a.jwt, { name: 'forever' });
  s.clock.advance(1000);
  const shortLived = await s.createToken(s.a.jwt, { name: 'short', expires_at: new Date(start.getTime() + 61_000).toISOString() });
  s.clock.advance(1000);
  const longLived = await s.createToken(s.a.jwt, { name: 'long', expires_at: new Date(start.getTime() + 86_400_000).toISOString() });
  s.clock.advance(1000);
  const revoked = await s.createToken(s.a.jwt, { name: 'revoked' });
  t.equal((await s.post(s.a.jwt, `${BASE}/${revoked.id}/revoke`)).statusCode, 200);

  const byState = async (state: string) => {
    const response = await s.get(s.a.jwt, `${BASE}?state=${state}`);
    t.equal(response.statusCode, 200);
    const page = response.json<ListJson>();
    t.strictSame(page.meta.filters, { state }, `${state}: echoed`);
    t.equal(page.meta.pagination.total_count, page.data.length, `${state}: total_count counts the filtered tokens`);
    return page.data.map((token: ApiTokenJson) => token.name);
  };
  t.strictSame(await byState('active'), ['long', 'short', 'forever']);
  t.strictSame(await byState('expired'), []);
  t.strictSame(await byState('revoked'), ['revoked']);

  // 61 s after `start` the short-lived token's expires_at is reached: expired from that instant
  s.clock.set(new Date(start.getTime() + 61_000 - 1));
  t.strictSame(await byState('expired'), [], 'one millisecond before expires_at: still active');
  s.clock.set(new Date(start.getTime() + 61_000));
  t.strictSame(await byState('expired'), ['short'], 'at expires_at exactly: expired');
  t.strictSame(await byState('active'), ['long', 'forever']);
  s.clock.advance(86_400_000);
  t.strictSame(await byState('expired'), ['long', 'short']);
  t.strictSame(await byState('active'), ['forever']);
  t.strictSame(await byState('revoked'), ['revoked']);

  const all = (await s.get(s.a.jwt, BASE)).json<ListJson>();
  t.strictSame(
    all.data.map((token) => token.name),
    ['revoked', 'long', 'short', 'forever'],
    'no filter: every state',
  );
  t.equal(all.meta.filters.state, null);
  t.ok(forever.id && shortLived.id && longLived.id);
});

t.test('a revoked token that has also expired is listed as revoked, not expired', async (t) => {
  const s = await createWorld(t);
  const token = await s.createToken(s.a.jwt, { expires_at: new Date(s.clock.now().getTime() + 60_000).toISOString() });
  t.equal((await s.post(s.a.jwt, `${BASE}/${token.id}/revoke`)).statusCode, 200);
  s.clock.advance(61_000);
  const names = async (state: string) => (await s.get(s.a.jwt, `${BASE}?state=${state}`)).json<ListJson>().data.map((x) => x.id);
  t.strictSame(await names('revoked'), [token.id]);
  t.strictSame(await names('expired'), []);
  t.strictSame(await names('active'), []);
});

t.test('the expiry example from the brief: expires_at = now + 60 s, then the clock moves 61 s', async (t) => {
  const s = await createWorld(t);
  const token = await s.createToken(s.a.jwt, { expires_at: new Date(s.clock.now().getTime() + 60_000).toISOString() });
  const active = (await s.get(s.a.jwt, `${BASE}?state=active`)).json<ListJson>();
  t.strictSame(ids(active), [token.id]);
  s.clock.advance(61_000);
  const expired = (await s.get(s.a.jwt, `${BASE}?state=expired`)).json<ListJson>();
  t.strictSame(ids(expired), [token.id]);
  t.equal(expired.data[0]?.revoked, false, 'an expired token is not revoked');
  t.strictSame((await s.get(s.a.jwt, `${BASE}?state=active`)).json<ListJson>().data, []);
});
