// GET /api/v1/api-tokens/{token_id}/usage, bad input: a from/to that is no real date, a reversed
// or over-long window, an unknown or repeated parameter: 400 invalid_request naming the field;
// an id that names nothing: 404. Never a 500.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { BASE, createWorld, type ErrorJson } from './setup.js';

const world = await createWorld(t);
const { a } = world;
world.clock.set(new Date('2026-03-10T12:00:00Z'));
const token = await world.createToken(a.jwt);
const usage = (query: string, id = token.id) => world.get(a.jwt, `${BASE}/${id}/usage${query}`);

t.test('bad dates and windows: 400 naming the field', async (t) => {
  const cases: Array<[string, string]> = [
    ['?from=2026-02-30', 'from'],
    ['?from=20260301', 'from'],
    ['?from=', 'from'],
    ['?to=2026-13-01', 'to'],
    ['?to=yesterday', 'to'],
    ['?from=2026-03-01&from=2026-03-02', 'from'],
    ['?from=2026-03-05&to=2026-03-04', 'to'],
    ['?from=2025-12-01&to=2026-03-10', 'from'],
    ['?to=2026-03-10&from=2026-03-10T00:00:00Z', 'from'],
    ['?days=7', 'days'],
  ];
  for (const [query, field] of cases) {
    const response = await usage(query);
    t.equal(response.statusCode, 400, query);
    const { error } = response.json<ErrorJson>();
    t.equal(error.code, 'invalid_request', `${query}: code`);
    t.equal(error.details?.field, field, `${query}: names ${field}`);
  }
});

t.test('the longest window is 90 days', async (t) => {
  t.equal((await usage('?from=2025-12-11&to=2026-03-10')).statusCode, 200, '90 days');
  const response = await usage('?from=2025-12-10&to=2026-03-10');
  t.equal(response.statusCode, 400, '91 days');
  t.match(response.json<ErrorJson>().error.message, /91 days; the longest allowed is 90/);
});

t.test('the calendar’s edges: no 500', async (t) => {
  const first = await usage('?to=0001-01-05');
  t.equal(first.statusCode, 200, first.body);
  t.equal(first.json<{ from: string }>().from, '0001-01-01', 'the default start stops at the first day');
  t.equal((await usage('?from=9999-12-01&to=9999-12-31')).statusCode, 200);
  t.equal((await usage('?from=0000-01-01')).statusCode, 400, 'year 0 is no date');
});

t.test('ids that name nothing: 404', async (t) => {
  for (const id of [randomUUID(), 'abc', token.id.slice(0, -1), token.token]) {
    const response = await usage('', encodeURIComponent(id));
    t.equal(response.statusCode, 404, id.slice(0, 20));
    t.equal(response.json<ErrorJson>().error.code, 'not_found');
  }
});
