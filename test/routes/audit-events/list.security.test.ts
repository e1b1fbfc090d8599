// GET /api/v1/audit-events, security: only a Registered Employee, only their company's events (a
// filter naming another company's token is 404, exactly like an unknown one), never a raw token
// or a token's hash in an event, and reads count against the employee's management read limit.
import { createHash, randomUUID } from 'node:crypto';
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { BASE, createWorld, type CreatedToken, type ErrorJson } from '../api-tokens/setup.js';
import { EVENTS, listEvents } from './setup.js';

const world = await createWorld(t);
const { a, b } = world;
const aToken = await world.createToken(a.jwt, { name: 'A secret project' });
const aReplacement = (await world.post(a.jwt, `${BASE}/${aToken.id}/rotate`)).json<CreatedToken>();
await world.post(a.jwt, `${BASE}/${aReplacement.id}/revoke`);
const bToken = await world.createToken(b.jwt, { name: 'B token' });

t.test('401 without a usable JWT, 403 for non-employees; no event shown', async (t) => {
  for (const [label, headers] of [
    ['none', {}],
    ['garbage', { authorization: 'Bearer x.y.z' }],
    ['an API token instead of a JWT', { authorization: `Bearer ${bToken.token}` }],
    ['an inactive employee', { authorization: `Bearer ${await world.jwtFor(a.inactiveEmployeeId)}` }],
  ] as const) {
    const response = await world.get(null, EVENTS, headers);
    t.equal(response.statusCode, 401, label);
    t.match(response.headers['www-authenticate'], /^Bearer\b/, `${label}: WWW-Authenticate`);
    t.notOk(response.body.includes(aToken.id), `${label}: nothing of A`);
  }
  for (const userId of [a.operatorId, a.farmerIds[0]!]) {
    const response = await world.get(await world.jwtFor(userId), EVENTS);
    t.equal(response.statusCode, 403);
    t.equal(response.json<ErrorJson>().error.code, 'insufficient_scope');
  }
});

t.test('each company sees its own events only, whatever the filters', async (t) => {
  for (const query of [
    '',
    '?action=token.created',
    '?action=token.rotated',
    '?action=token.revoked',
    '?page_size=1000',
    '?from=2000-01-01T00:00Z',
  ]) {
    const page = await listEvents(world, b.jwt, query);
    t.equal(page.meta.company_id, b.companyId, `${query}: meta.company_id`);
    t.ok(
      page.data.every((event) => event.token_id === bToken.id),
      `${query}: only B's token`,
    );
    t.notOk(JSON.stringify(page).includes(aToken.id) || JSON.stringify(page).includes('A secret project'), `${query}: nothing of A`);
  }
  t.equal((await listEvents(world, a.jwt)).meta.pagination.total_count, 3, 'A sees its three');
  t.equal((await listEvents(world, b.jwt)).data[0]!.sequence, 1, "B's chain is its own: its first event is sequence 1");
});

t.test("B filtering by A's token is 404, byte for byte what an unknown token gets", async (t) => {
  for (const id of [aToken.id, aReplacement.id]) {
    const foreign = await world.get(b.jwt, `${EVENTS}?token_id=${id}`);
    const unknown = await world.get(b.jwt, `${EVENTS}?token_id=${randomUUID()}`);
    t.equal(foreign.statusCode, 404);
    t.equal(foreign.body, unknown.body, 'the same body');
    t.strictSame(Object.keys(foreign.headers).sort(), Object.keys(unknown.headers).sort(), 'the same headers');
  }
});

t.test('no raw token, and no token hash, in any event', async (t) => {
  const body = JSON.stringify(await listEvents(world, a.jwt, '?page_size=1000'));
  for (const secret of [aToken.token, aReplacement.token]) {
    t.notOk(body.includes(secret), 'not the token');
    t.notOk(body.includes(secret.slice(4, 24)), 'not a part of it');
    const hash = createHash('sha256').update(secret).digest();
    t.notOk(body.includes(hash.toString('hex')) || body.includes(hash.toString('base64')), 'not its hash');
  }
  const { rows } = await world.db.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM token_audit_events e JOIN api_tokens k ON e.details::text LIKE '%' || encode(k.token_hash, 'hex') || '%'",
  );
  t.equal(rows[0]!.n, 0, 'nor in the table');
});

t.test("reads count against the employee's management read limit, with the token list: the 601st in a minute is 429", async (t) => {
  const limited = await createTestApp(t, {}, { realRateLimits: true });
  const company = await createCompany(limited.db.pool, 'Limited Co');
  const headers = { authorization: `Bearer ${await limited.jwtFor(company.employeeId)}` };
  for (let i = 0; i < 600; i++) {
    const response = await limited.app.inject({ url: i % 2 ? EVENTS : BASE, headers });
    if (response.statusCode !== 200) t.fail(`read ${i + 1}: ${response.statusCode}`);
  }
  const refused = await limited.app.inject({ url: EVENTS, headers });
  t.equal(refused.statusCode, 429);
  t.match(refused.json<ErrorJson>().error.details, { scope: 'authenticated_read' });
});
