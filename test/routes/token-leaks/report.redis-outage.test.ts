// A leak report while Redis is down, on a private redis-server: the revoke cannot be fanned out,
// so the report answers 503 unavailable and changes nothing: the token stays live, no leak is
// recorded, no label or revoke is counted. GitHub sends it again; once Redis is back (restarted
// empty), the same report revokes the token, records the leak and counts it, as a first report does.
import t from 'tap';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';
import { metricSum, startRedis, until } from '../../operations/harness.js';
import { isRevoked, keysSetting, leakEvents, LEAKS, makeSigner, REPORTED_TYPE, reportBody, signedHeaders } from './setup.js';

const redis = await startRedis(t);
const github = makeSigner();
const ctx = await createTestApp(t, { REDIS_URL: redis.url, LEAK_REPORT_PUBLIC_KEYS: keysSetting(github) });
const acme = await createCompany(ctx.db.pool, 'Acme');

const report = (body: string) => ctx.app.inject({ method: 'POST', url: LEAKS, headers: signedHeaders(github, body), payload: body });
const figures = async () => {
  const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
  return {
    truePositive: metricSum(text, 'token_leak_reports_total', { label: 'true_positive' }),
    falsePositive: metricSum(text, 'token_leak_reports_total', { label: 'false_positive' }),
    revoked: metricSum(text, 'leaked_tokens_revoked_total'),
  };
};

t.test('Redis down: 503 and nothing changed; Redis back: the resent report revokes and counts', async (t) => {
  const leaked = await issueToken(ctx, acme.employeeId);
  const body = reportBody([{ token: leaked.token, url: 'https://github.com/octo/outage/blob/1/.env', source: 'content' }]);

  await redis.kill();
  const refused = await report(body);
  t.equal(refused.statusCode, 503, 'the revoke cannot reach every process: unavailable');
  t.equal(refused.json().error.code, 'unavailable');
  t.notMatch(refused.body, leaked.token, 'the answer does not echo the token when it labels nothing');
  t.notOk(await isRevoked(ctx.db.pool, leaked.id), 'the token is still live');
  t.same(await leakEvents(ctx.db.pool, leaked.id), [], 'no leak recorded');
  t.same(await figures(), { truePositive: 0, falsePositive: 0, revoked: 0 }, 'nothing counted');

  await redis.start();
  // readiness probes Redis: once it says ready, the resent report (one: the route's per-IP
  // limit is small) can fan its revoke out
  await until(
    'readiness with Redis back',
    async () => (await ctx.app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200,
    15_000,
    200,
  );
  const answered = await report(body);
  t.equal(answered.statusCode, 200);
  t.same(answered.json(), [{ token_raw: leaked.token, token_type: REPORTED_TYPE, label: 'true_positive' }]);
  t.ok(await isRevoked(ctx.db.pool, leaked.id), 'revoked now');
  t.same(
    (await leakEvents(ctx.db.pool, leaked.id)).map((event) => event.action),
    ['token.leak_reported', 'token.revoked_leaked'],
    'the leak recorded once, with its revoke',
  );
  t.same(await figures(), { truePositive: 1, falsePositive: 0, revoked: 1 }, 'counted once, as answered');
});
