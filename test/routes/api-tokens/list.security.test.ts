// GET /api/v1/api-tokens, security: only a Registered Employee, only their company's tokens,
// never a raw token, and a token pushed into the query string is refused and not logged.
import t from 'tap';
import { BASE, createWorld, type CreatedToken, type ErrorJson, type ListJson } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;

// A: an active, an expiring, a revoked token; B: one token
const aTokens: CreatedToken[] = [
  await world.createToken(a.jwt, { name: 'A active' }),
  await world.createToken(a.jwt, { name: 'A expiring', expires_at: new Date(world.clock.now().getTime() + 60_000).toISOString() }),
  await world.createToken(a.jwt, { name: 'A revoked' }),
];
await world.post(a.jwt, `${BASE}/${aTokens[2]!.id}/revoke`);
world.clock.advance(61_000);
const bToken = await world.createToken(b.jwt, { name: 'B token' });

t.test('401 without a usable JWT, 403 for non-employees', async (t) => {
  for (const [label, headers] of [
    ['none', {}],
    ['empty bearer', { authorization: 'Bearer ' }],
    ['token instead of JWT', { authorization: `Bearer ${aTokens[0]!.token}` }],
  ] as const) {
    const response = await world.get(null, BASE, headers);
    t.equal(response.statusCode, 401, label);
    t.match(response.headers['www-authenticate'], /^Bearer\b/);
    t.equal(response.json<ErrorJson>().error.code, 'unauthorized');
    t.notOk(response.body.includes('A active'), 'no data');
  }
  for (const userId of [a.operatorId, a.farmerIds[0]!]) {
    const response = await world.get(await world.jwtFor(userId), BASE);
    t.equal(response.statusCode, 403);
    t.equal(response.json<ErrorJson>().error.code, 'insufficient_scope');
  }
  const inactive = await world.get(await world.jwtFor(a.inactiveEmployeeId), BASE);
  t.equal(inactive.statusCode, 401);
});

t.test('company B never sees company A’s tokens, in any state or page', async (t) => {
  const aIds = new Set(aTokens.map((token) => token.id));
  for (const query of ['', '?state=active', '?state=expired', '?state=revoked', '?page=1&page_size=1', '?page=2&page_size=1']) {
    const response = await world.get(b.jwt, `${BASE}${query}`);
    t.equal(response.statusCode, 200);
    const page = response.json<ListJson>();
    t.equal(page.meta.company_id, b.companyId, `${query}: meta.company_id`);
    t.notOk(
      page.data.some((token) => aIds.has(token.id) || token.company_id !== b.companyId),
      `${query}: only B’s tokens`,
    );
    t.notOk(response.body.includes('A active') || response.body.includes('A revoked'), `${query}: no A names`);
  }
  const counts = (await world.get(b.jwt, BASE)).json<ListJson>().meta.pagination;
  t.equal(counts.total_count, 1, 'total_count does not count A’s tokens');

  const widened = await world.get(b.jwt, `${BASE}?company_id=${a.companyId}`);
  t.equal(widened.statusCode, 400, 'company_id is not a parameter');
  t.equal(widened.json<ErrorJson>().error.details?.field, 'company_id');
});

t.test('A sees its own three tokens in the expected states', async (t) => {
  const state = async (name: string) => (await world.get(a.jwt, `${BASE}?state=${name}`)).json<ListJson>().data.map((x) => x.name);
  t.strictSame(await state('active'), ['A active']);
  t.strictSame(await state('expired'), ['A expiring']);
  t.strictSame(await state('revoked'), ['A revoked']);
  t.notOk((await world.get(a.jwt, BASE)).body.includes(bToken.id));
});

t.test('no list response contains a raw token', async (t) => {
  for (const [jwt, tokens] of [
    [a.jwt, aTokens],
    [b.jwt, [bToken]],
  ] as const) {
    for (const query of ['', '?state=active', '?state=expired', '?state=revoked', '?page_size=1000']) {
      const response = await world.get(jwt, `${BASE}${query}`);
      for (const token of tokens) t.notOk(response.body.includes(token.token), `${query}: ${token.name}`);
      t.notOk(response.body.includes('"token"'), `${query}: no token field`);
      t.notMatch(response.body, /ctk_/, `${query}: nothing token-shaped`);
    }
  }
});

t.test('a token in the query string is refused, not used, and not logged', async (t) => {
  const raw = aTokens[0]!.token;
  for (const name of ['token', 'api_token', 'access_token']) {
    const response = await world.get(a.jwt, `${BASE}?${name}=${raw}`);
    t.equal(response.statusCode, 400, name);
    t.equal(response.json<ErrorJson>().error.details?.field, name);
    t.notOk(response.body.includes(raw), `${name}: not echoed`);
  }
  // with no Authorization at all, the query token must not authenticate anyone
  const anonymous = await world.get(null, `${BASE}?token=${raw}`);
  t.equal(anonymous.statusCode, 401);
  const jwtInQuery = await world.get(null, `${BASE}?access_token=${a.jwt}`);
  t.equal(jwtInQuery.statusCode, 401, 'a JWT in the query string does not authenticate either');

  const logs = world.logs.join('\n');
  t.ok(logs.includes('token='), 'the requests were logged');
  t.notOk(logs.includes(raw), 'the raw token is not in the logs');
  t.notOk(logs.includes(raw.slice(4, 24)), 'nor any part of it');
  t.notOk(logs.includes(a.jwt), 'nor the JWT');
});
