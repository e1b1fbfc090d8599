// The client trusts nothing from the wire. Against a real HTTP server that answers hostile
// headers and bodies: a Retry-After or rate-limit Reset too far ahead is neither slept (a day per
// attempt) nor overflows the timer (setTimeout fires at once past 2^31 - 1 ms) nor spins: the call
// throws a ColdtrackRetryLaterError at once, saying when the service asked to be called again; the
// waits of one call together stay within maxTotalWaitMs; a 200 that is not JSON is a
// ColdtrackInvalidResponseError, not a bare SyntaxError; a message echoing the Authorization header
// never puts the token into an error. Every failure is a ColdtrackError with a code.
import t, { type Test } from 'tap';
import {
  ColdtrackApiError,
  ColdtrackClient,
  ColdtrackError,
  ColdtrackInvalidResponseError,
  ColdtrackNetworkError,
  ColdtrackRetryLaterError,
  ColdtrackTimeoutError,
  DEFAULT_MAX_WAIT_MS,
  RateBudget,
} from '@coldtrack/client';
import { type Answer, hostilePeer } from './hostile-peer.js';

const TOKEN = `ctk_${'S3cr3tT0k3n'.repeat(4)}abcde`;
const OTHER_TOKEN = `ctk_${'0therT0ken'.repeat(4)}xyzuvw9`;

const warnings: string[] = [];
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));

async function callAgainst(
  t: Test,
  answer: (n: number) => Answer,
  options: Partial<ConstructorParameters<typeof ColdtrackClient>[0]> = {},
) {
  const peer = await hostilePeer(answer);
  t.teardown(() => peer.close());
  const client = new ColdtrackClient({ baseUrl: peer.url, token: TOKEN, budget: new RateBudget(), backoffMs: 10, ...options });
  const started = Date.now();
  const outcome = await client.sensorData({ cooling_unit_id: 1 }).then(
    (value) => ({ value, error: null as unknown }),
    (error: unknown) => ({ value: null, error }),
  );
  return { ...outcome, ms: Date.now() - started, requests: peer.seen.length, peer };
}

t.test('Retry-After: 4294967296 (past any timer): thrown at once, one request, no timer overflow', async (t) => {
  for (const status of [503, 429]) {
    const run = await callAgainst(t, () => ({
      status,
      headers: { 'retry-after': '4294967296' },
      body: { error: { code: 'x', message: 'later' } },
    }));
    t.type(run.error, ColdtrackRetryLaterError, `${status}: ColdtrackRetryLaterError`);
    t.match(run.error, { code: 'retry_later', retryAfterSeconds: 4294967296, limit: 'maxWaitMs', limitMs: DEFAULT_MAX_WAIT_MS });
    t.equal(run.requests, 1, `${status}: one request, not five within milliseconds`);
    t.ok(run.ms < 1000, `${status}: at once (${run.ms} ms)`);
    t.type((run.error as Error).cause, ColdtrackApiError, `${status}: the refusal is its cause`);
  }
  // a clock that moves between two readings (one millisecond per reading, as a busy machine's does)
  // changes nothing: the wait reported is the one the service asked for
  let clock = Date.now();
  const ticking = await callAgainst(t, () => ({ status: 429, headers: { 'retry-after': '4294967296' } }), { now: () => clock++ });
  t.match(ticking.error, { code: 'retry_later', retryAfterSeconds: 4294967296, limit: 'maxWaitMs' }, 'a ticking clock');
  const digits = await callAgainst(t, () => ({ status: 503, headers: { 'retry-after': '9'.repeat(400) } }));
  t.match(digits.error, { code: 'retry_later', retryAfterSeconds: Infinity, retryAt: null }, 'a number no clock reaches');
  t.equal(digits.requests, 1);
  t.same(warnings, [], 'no TimeoutOverflowWarning');
});

t.test('a rate-limit window said to end 1e10 s ahead: thrown at once, never a spin on 1 ms timers', async (t) => {
  const reset = String(Math.floor(Date.now() / 1000) + 1e10);
  // the first answer spends the budget until then; the second call must not wait for it
  const peer = await hostilePeer(() => ({
    headers: { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset },
  }));
  t.teardown(() => peer.close());
  const client = new ColdtrackClient({ baseUrl: peer.url, token: TOKEN, budget: new RateBudget() });
  await client.sensorData();
  const started = Date.now();
  const error = await client.sensorData().catch((e: unknown) => e);
  t.type(error, ColdtrackRetryLaterError);
  t.match(error, { code: 'retry_later', limit: 'maxWaitMs' });
  t.ok((error as ColdtrackRetryLaterError).retryAfterSeconds > 9e9, 'says how far ahead the service put the window');
  t.ok(Date.now() - started < 1000, `at once (${Date.now() - started} ms)`);
  t.equal(peer.seen.length, 1, 'no request sent into a spent window');

  const refused = await callAgainst(t, () => ({
    status: 429,
    headers: { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset },
    body: { error: { code: 'rate_limited', message: 'slow down' } },
  }));
  t.match(refused.error, { code: 'retry_later' }, 'a 429 with that Reset: thrown too');
  t.equal(refused.requests, 1);
  t.ok(refused.ms < 1000);
  t.same(warnings, [], 'no TimeoutOverflowWarning');
});

t.test('Retry-After: 86400 is not slept (a day per attempt): thrown with when to come back', async (t) => {
  const run = await callAgainst(t, () => ({
    status: 503,
    headers: { 'retry-after': '86400' },
    body: { error: { code: 'unavailable', message: 'down' } },
  }));
  t.type(run.error, ColdtrackRetryLaterError);
  const error = run.error as ColdtrackRetryLaterError;
  t.equal(error.retryAfterSeconds, 86400);
  t.ok(error.retryAt && Math.abs(error.retryAt.getTime() - (Date.now() + 86_400_000)) < 5000, `retryAt ${error.retryAt?.toISOString()}`);
  t.match(error.message, /the service asks to wait 86400 s, longer than the 120 s the client waits \(maxWaitMs\)/);
  t.equal(run.requests, 1);
  t.ok(run.ms < 1000);
});

t.test('waits within the maximum are still taken, and all of one call stay within maxTotalWaitMs', async (t) => {
  const retried = await callAgainst(t, (n) => (n === 1 ? { status: 503, headers: { 'retry-after': '1' } } : {}));
  t.equal(retried.error, null, 'a Retry-After of 1 s is waited and retried');
  t.equal(retried.requests, 2);
  t.ok(retried.ms >= 1000);

  const budgeted = await callAgainst(t, () => ({ status: 503, headers: { 'retry-after': '1' } }), { maxTotalWaitMs: 2500, retries: 10 });
  t.match(budgeted.error, { code: 'retry_later', limit: 'maxTotalWaitMs', limitMs: 2500 });
  t.equal(budgeted.requests, 3, 'two waits of ~1 s fit in 2.5 s, the third does not');
  t.ok(budgeted.ms < 3000, `${budgeted.ms} ms`);
});

t.test('a 200 whose body is not JSON: ColdtrackInvalidResponseError, not a bare SyntaxError', async (t) => {
  const run = await callAgainst(t, () => ({
    status: 200,
    body: '<html>Welcome to the captive portal</html>',
    headers: { 'x-request-id': 'r-1' },
  }));
  t.type(run.error, ColdtrackInvalidResponseError);
  t.notOk(run.error instanceof SyntaxError);
  t.match(run.error, {
    code: 'invalid_response',
    status: 200,
    contentType: 'text/html',
    requestId: 'r-1',
    request: 'GET /api/v1/sensor-data',
  });
  t.equal(run.requests, 1, 'not retried');
});

t.test('a server echoing the Authorization header: the token appears in no error', async (t) => {
  const run = await callAgainst(t, (n) => ({
    status: 401,
    body: {
      error: {
        code: 'unauthorized',
        message: `bad credentials: ${String(n)} Authorization: Bearer ${TOKEN} (also tried ${OTHER_TOKEN})`,
        details: { header: `Bearer ${TOKEN}`, nested: [{ token: OTHER_TOKEN }] },
      },
    },
  }));
  const error = run.error as ColdtrackApiError;
  t.type(error, ColdtrackApiError);
  t.equal(error.message, 'bad credentials: 1 Authorization: Bearer [redacted] (also tried [redacted])');
  const everything = `${String(error)} ${error.stack ?? ''} ${JSON.stringify(error)} ${JSON.stringify(error.details)}`;
  t.notOk(everything.includes(TOKEN), 'not the client token');
  t.notOk(everything.includes(OTHER_TOKEN), 'not a token-shaped string either');
  t.equal(run.peer.seen[0]!.authorization, `Bearer ${TOKEN}`, 'the token was sent (and only there)');
});

t.test('every failure is a ColdtrackError with a code', async (t) => {
  const hung = await callAgainst(t, () => ({ hang: true }), { timeoutMs: 200, retries: 0 });
  t.type(hung.error, ColdtrackTimeoutError);
  const peer = await hostilePeer(() => ({}));
  const closedUrl = peer.url;
  await peer.close();
  const client = new ColdtrackClient({ baseUrl: closedUrl, token: TOKEN, budget: new RateBudget(), retries: 0 });
  const refused = await client.sensorData().catch((e: unknown) => e);
  t.type(refused, ColdtrackNetworkError);
  const api = await callAgainst(t, () => ({ status: 404, body: 'not json either' }));
  for (const [name, error, code] of [
    ['timeout', hung.error, 'timeout'],
    ['network', refused, 'network_error'],
    ['an error body that is not JSON', api.error, 'http_404'],
  ] as const) {
    t.type(error, ColdtrackError, `${name}: a ColdtrackError`);
    t.equal((error as ColdtrackError).code, code, `${name}: code ${code}`);
  }
});
