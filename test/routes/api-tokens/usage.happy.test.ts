// GET /api/v1/api-tokens/{token_id}/usage: a token's requests per UTC day, by route and answer
// class, appear once the write-behind flushes (never before: no write per request), with the
// client it was last used from; the window defaults to the last 30 days and holds every day.
import t from 'tap';
import { BASE, createWorld } from './setup.js';

interface UsageJson {
  token_id: string;
  from: string;
  to: string;
  requests: number;
  by_class: Record<string, number>;
  by_endpoint: Array<{ endpoint: string; requests: number; by_class: Record<string, number> }>;
  days: Array<{
    date: string;
    requests: number;
    by_class: Record<string, number>;
    by_endpoint: Array<{ endpoint: string; requests: number }>;
  }>;
  last_used_at: string | null;
  last_ip: string | null;
  last_user_agent: string | null;
}

const world = await createWorld(t);
const { a } = world;
world.clock.set(new Date('2026-03-10T23:59:58Z'));
const token = await world.createToken(a.jwt, { scopes: ['users', 'revenue'] });
const data = (url: string, userAgent = 'etl/1.0') =>
  world.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token.token}`, 'user-agent': userAgent } });
const usage = async (query = '') => {
  const response = await world.get(a.jwt, `${BASE}/${token.id}/usage${query}`);
  t.equal(response.statusCode, 200, response.body);
  return response.json<UsageJson>();
};
const rowCount = async () => (await world.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_token_usage')).rows[0]!.n;

t.test('a new token: every day of the last 30, all zero, no client yet', async (t) => {
  const body = await usage();
  t.equal(body.token_id, token.id);
  t.equal(body.from, '2026-02-09');
  t.equal(body.to, '2026-03-10');
  t.equal(body.days.length, 30);
  t.equal(body.requests, 0);
  t.ok(body.days.every((day) => day.requests === 0 && day.by_endpoint.length === 0));
  t.strictSame(body.by_class, { '2xx': 0, '304': 0, '4xx': 0, '429': 0, '5xx': 0 });
  t.strictSame([body.last_used_at, body.last_ip, body.last_user_agent], [null, null, null]);
});

t.test('requests are counted by day, route and class, and written only by the flush', async (t) => {
  for (let i = 0; i < 3; i++) t.equal((await data('/api/v1/analytics/users')).statusCode, 200);
  t.equal((await data('/api/v1/analytics/revenue?period=fortnight')).statusCode, 400, 'a 4xx after the token is known');
  t.equal((await data('/api/v1/analytics/utilization')).statusCode, 403, 'a scope refusal counts too');
  t.equal((await data('/api/v1/analytics/users', 'etl/1.1')).statusCode, 200);
  // the next UTC day: two seconds later
  world.clock.advance(2000);
  t.equal((await data('/api/v1/analytics/users', 'etl/2.0')).statusCode, 200);
  t.equal(await rowCount(), 0, 'nothing written before the flush');

  await world.app.lastUsed.flush();
  t.ok((await rowCount()) > 0, 'written by the flush');
  const body = await usage('?from=2026-03-10&to=2026-03-11');
  t.equal(body.days.length, 2);
  const [first, second] = body.days;
  t.equal(first!.date, '2026-03-10');
  t.strictSame(first!.by_class, { '2xx': 4, '304': 0, '4xx': 2, '429': 0, '5xx': 0 });
  t.strictSame(
    first!.by_endpoint.map(({ endpoint, requests }) => [endpoint, requests]),
    [
      ['/api/v1/analytics/users', 4],
      ['/api/v1/analytics/revenue', 1],
      ['/api/v1/analytics/utilization', 1],
    ],
  );
  t.equal(second!.requests, 1);
  t.strictSame(second!.by_class, { '2xx': 1, '304': 0, '4xx': 0, '429': 0, '5xx': 0 });
  t.equal(body.requests, 7);
  t.strictSame(body.by_class, { '2xx': 5, '304': 0, '4xx': 2, '429': 0, '5xx': 0 });
  t.equal(body.by_endpoint[0]!.endpoint, '/api/v1/analytics/users');
  t.strictSame(body.by_endpoint[0]!.by_class, { '2xx': 5, '304': 0, '4xx': 0, '429': 0, '5xx': 0 });
  t.equal(body.last_user_agent, 'etl/2.0', 'the last request’s User-Agent');
  t.equal(body.last_ip, '127.0.0.1');
  t.ok(body.last_used_at, 'last_used_at written by the same flush');
});

t.test('flushes add up: a second flush adds to the same rows, an empty one changes nothing', async (t) => {
  t.equal((await data('/api/v1/analytics/users')).statusCode, 200);
  await world.app.lastUsed.flush();
  await world.app.lastUsed.flush();
  const body = await usage('?from=2026-03-11&to=2026-03-11');
  t.strictSame(body.days[0]!.by_class, { '2xx': 2, '304': 0, '4xx': 0, '429': 0, '5xx': 0 });
});

t.test('a revoked token’s refused requests (401) count for no token', async (t) => {
  const revoked = await world.createToken(a.jwt, { scopes: ['users'] });
  t.equal((await world.post(a.jwt, `${BASE}/${revoked.id}/revoke`)).statusCode, 200);
  const answer = await world.app.inject({
    method: 'GET',
    url: '/api/v1/analytics/users',
    headers: { authorization: `Bearer ${revoked.token}` },
  });
  t.equal(answer.statusCode, 401);
  await world.app.lastUsed.flush();
  const response = await world.get(a.jwt, `${BASE}/${revoked.id}/usage`);
  t.equal(response.json<UsageJson>().requests, 0);
});

t.test('an explicit window ending in the past', async (t) => {
  const body = await usage('?from=2026-01-01&to=2026-03-31');
  t.equal(body.days.length, 90, 'the longest window: 90 days');
  t.equal(body.requests, 8);
  const defaultFrom = await usage('?to=2026-03-11');
  t.equal(defaultFrom.from, '2026-02-10', '30 days up to `to`');
});
