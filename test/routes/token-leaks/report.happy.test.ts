// A signed leak report, as GitHub sends it: a live token of ours is revoked before the answer and
// labelled true_positive, with token.leak_reported and token.revoked_leaked in its company's
// trail (actor leak_reporter "github", the URL and source, the client IP, User-Agent and request
// id); a mistyped, made-up or unknown token is false_positive and costs nothing; a token already
// revoked or expired is still ours (true_positive) and only its leak is recorded; a replayed
// report answers the same and records nothing new; the chain still verifies.
import t from 'tap';
import { verifyChain } from '../../../src/audit/verify.js';
import { generateToken } from '../../../src/tokens/format.js';
import { createTestApp } from '../../helpers/app.js';
import { createCompany } from '../../helpers/fixtures.js';
import { issueToken } from '../../helpers/tokens.js';
import { metricSum } from '../../operations/harness.js';
import { isRevoked, keysSetting, leakEvents, LEAKS, makeSigner, reportBody, REPORTED_TYPE, revokedCount, signedHeaders } from './setup.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const github = makeSigner();
const ctx = await createTestApp(t, { REDIS_URL, LEAK_REPORT_PUBLIC_KEYS: keysSetting(github), TRUST_PROXY: '127.0.0.1' });
const acme = await createCompany(ctx.db.pool, 'Acme');
const other = await createCompany(ctx.db.pool, 'Other');
const DATA = '/api/v1/analytics/utilization?page_size=1';
const data = (token: string) => ctx.app.inject({ method: 'GET', url: DATA, headers: { authorization: `Bearer ${token}` } });

async function report(body: string, extra: Record<string, string> = {}) {
  return ctx.app.inject({ method: 'POST', url: LEAKS, headers: { ...signedHeaders(github, body), ...extra }, payload: body });
}

/** A well-formed token (valid checksum) with one character of its secret changed. */
function mistyped(token: string) {
  const at = 10;
  return token.slice(0, at) + (token[at] === 'a' ? 'b' : 'a') + token.slice(at + 1);
}

t.test('a live token is revoked before the answer; the other company and other tokens are untouched', async (t) => {
  const leaked = await issueToken(ctx, acme.employeeId);
  const bystander = await issueToken(ctx, other.employeeId);
  t.equal((await data(leaked.token)).statusCode, 200, 'works (and is cached) before the report');
  const url = 'https://github.com/octo/leaky/blob/abc123/.env';
  const body = reportBody([{ token: leaked.token, url, source: 'commit' }]);
  const response = await report(body, {
    'user-agent': 'GitHub-Secret-Scanning/1.0',
    'x-forwarded-for': '140.82.115.7',
    'x-request-id': 'leak-1',
  });
  t.equal(response.statusCode, 200);
  t.same(response.json(), [{ token_raw: leaked.token, token_type: REPORTED_TYPE, label: 'true_positive' }], 'only the protocol fields');
  t.equal(response.headers['cache-control'], 'no-store');
  t.equal(response.headers['content-encoding'], undefined, 'the answer echoes tokens: never compressed');
  t.equal((await data(leaked.token)).statusCode, 401, 'refused right after the answer');
  t.ok(await isRevoked(ctx.db.pool, leaked.id));
  t.equal((await data(bystander.token)).statusCode, 200, "another company's token still works");

  const events = await leakEvents(ctx.db.pool, leaked.id);
  t.same(
    events.map((event) => event.action),
    ['token.leak_reported', 'token.revoked_leaked'],
    'both events, the report first',
  );
  for (const event of events) {
    t.match(event, {
      actor_type: 'leak_reporter',
      actor_id: 'github',
      client_ip: '140.82.115.7',
      user_agent: 'GitHub-Secret-Scanning/1.0',
      request_id: 'leak-1',
      details: { url, source: 'commit' },
    });
    t.notOk(JSON.stringify(event).includes(leaked.token), 'no raw token in the trail');
  }
  t.equal(events[0]!.details.token_state, 'active');

  // the employee's view: the audit trail lists them with the URL
  const trail = await ctx.app.inject({
    method: 'GET',
    url: `/api/v1/audit-events?token_id=${leaked.id}`,
    headers: { authorization: `Bearer ${await ctx.jwtFor(acme.employeeId)}` },
  });
  t.equal(trail.statusCode, 200);
  t.match(trail.json().data, [
    { action: 'token.revoked_leaked', actor: { type: 'leak_reporter', id: 'github', name: null }, details: { url } },
    { action: 'token.leak_reported', details: { url, source: 'commit' } },
    { action: 'token.created' },
  ]);
  t.notOk(ctx.logs.join('\n').includes(leaked.token), 'the raw token is in no log line');
  for (const company of [acme, other]) t.match(await verifyChain(ctx.db.pool, company.companyId), { ok: true }, 'the chain verifies');
});

t.test('mistyped, made-up and unknown tokens are false_positive and change nothing', async (t) => {
  const live = await issueToken(ctx, acme.employeeId);
  const unknown = generateToken(); // well formed, checksum right, never issued
  const reported = [mistyped(live.token), live.token.slice(0, -1), 'ctk_not-a-token', unknown, 'ghp_somethingelse'];
  const before = await revokedCount(ctx.db.pool);
  const response = await report(reportBody(reported.map((token) => ({ token, type: 'whatever_type' }))));
  t.equal(response.statusCode, 200);
  t.same(
    response.json(),
    reported.map((token) => ({ token_raw: token, token_type: 'whatever_type', label: 'false_positive' })),
    'each answered, in order',
  );
  t.equal(await revokedCount(ctx.db.pool), before, 'nothing revoked');
  t.equal((await data(live.token)).statusCode, 200, 'the real token still works');
  t.same(await leakEvents(ctx.db.pool, live.id), [], 'no event');
});

t.test('a token already revoked or expired is ours (true_positive): its leak is recorded, nothing revoked', async (t) => {
  const revoked = await issueToken(ctx, acme.employeeId);
  const revoke = await ctx.app.inject({
    method: 'POST',
    url: `/api/v1/api-tokens/${revoked.id}/revoke`,
    headers: { authorization: `Bearer ${await ctx.jwtFor(acme.employeeId)}` },
  });
  t.equal(revoke.statusCode, 200);
  const expiresAt = new Date(Math.ceil((ctx.clock.now().getTime() + 60_000) / 1000) * 1000);
  const expiring = await issueToken(ctx, acme.employeeId, { expires_at: expiresAt.toISOString() });
  ctx.clock.set(new Date(expiresAt.getTime() + 1000));
  try {
    const response = await report(reportBody([{ token: revoked.token }, { token: expiring.token }]));
    t.same(
      response.json().map((entry: { label: string }) => entry.label),
      ['true_positive', 'true_positive'],
    );
    t.notOk(await isRevoked(ctx.db.pool, expiring.id), 'an expired token is not marked revoked');
    t.match(await leakEvents(ctx.db.pool, revoked.id), [{ action: 'token.leak_reported', details: { token_state: 'revoked' } }]);
    t.match(await leakEvents(ctx.db.pool, expiring.id), [{ action: 'token.leak_reported', details: { token_state: 'expired' } }]);
    t.equal((await leakEvents(ctx.db.pool, revoked.id)).length, 1, 'leak_reported only');
  } finally {
    ctx.clock.set(new Date());
  }
});

t.test('a replayed report answers the same labels and records nothing new; a new sighting is recorded', async (t) => {
  const leaked = await issueToken(ctx, acme.employeeId);
  const body = reportBody([{ token: leaked.token }, { token: generateToken() }]);
  const first = await report(body);
  t.equal(first.statusCode, 200);
  const events = await leakEvents(ctx.db.pool, leaked.id);
  t.equal(events.length, 2);
  for (let replay = 0; replay < 2; replay++) {
    const again = await report(body);
    t.equal(again.statusCode, 200, `replay ${replay + 1}: not an error`);
    t.same(again.json(), first.json(), 'the same labels');
  }
  t.equal((await leakEvents(ctx.db.pool, leaked.id)).length, 2, 'no event added by the replays');
  const elsewhere = await report(reportBody([{ token: leaked.token, url: 'https://www.npmjs.com/package/leaky', source: 'npm' }]));
  t.equal(elsewhere.json()[0].label, 'true_positive');
  t.match((await leakEvents(ctx.db.pool, leaked.id)).slice(2), [
    { action: 'token.leak_reported', details: { url: 'https://www.npmjs.com/package/leaky', source: 'npm', token_state: 'revoked' } },
  ]);
  t.match(await verifyChain(ctx.db.pool, acme.companyId), { ok: true }, 'the chain verifies');
});

t.test('one report: many tokens, duplicates, tokens of two companies, an empty URL', async (t) => {
  const a = await issueToken(ctx, acme.employeeId);
  const b = await issueToken(ctx, other.employeeId);
  const response = await report(reportBody([{ token: a.token, url: '' }, { token: b.token }, { token: a.token, url: '' }]));
  t.same(
    response.json().map((entry: { label: string }) => entry.label),
    ['true_positive', 'true_positive', 'true_positive'],
  );
  t.ok((await isRevoked(ctx.db.pool, a.id)) && (await isRevoked(ctx.db.pool, b.id)), 'both revoked');
  t.match(await leakEvents(ctx.db.pool, a.id), [
    { action: 'token.leak_reported', details: { url: null } },
    { action: 'token.revoked_leaked' },
  ]);
  t.equal((await leakEvents(ctx.db.pool, a.id)).length, 2, 'the duplicate is the same sighting: nothing more');
  for (const company of [acme, other]) t.match(await verifyChain(ctx.db.pool, company.companyId), { ok: true });
});

t.test('the metrics count every reported token by its answer, and each live token revoked once', async (t) => {
  const scrape = async () => (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
  const figures = (text: string) => ({
    truePositive: metricSum(text, 'token_leak_reports_total', { label: 'true_positive' }),
    falsePositive: metricSum(text, 'token_leak_reports_total', { label: 'false_positive' }),
    revoked: metricSum(text, 'leaked_tokens_revoked_total'),
  });
  const before = figures(await scrape());
  const leaked = await issueToken(ctx, acme.employeeId);
  const body = reportBody([
    { token: leaked.token, url: 'https://github.com/octo/metrics/blob/1/.env', source: 'content' },
    { token: mistyped(leaked.token), url: '', source: 'content' },
  ]);
  t.equal((await report(body)).statusCode, 200);
  t.equal((await report(body)).statusCode, 200, 'the same report replayed');
  const after = figures(await scrape());
  t.same(
    { truePositive: after.truePositive - before.truePositive, falsePositive: after.falsePositive - before.falsePositive },
    { truePositive: 2, falsePositive: 2 },
    'every listed token counted by its answer, the replay too',
  );
  t.equal(after.revoked - before.revoked, 1, 'the live token revoked once: the replay revoked nothing');
});
