// The client's request loop against a scripted fetch (no server): the shared budget lets no
// request start that the window has no room for, concurrent requests included; a 429 waits for
// X-RateLimit-Reset; a 503 waits Retry-After plus jitter, a bounded number of times; 400, 401,
// 403 and 404 are thrown at once as typed errors, never retried; timeouts and AbortSignal.
import t from 'tap';
import { ColdtrackApiError, ColdtrackClient, ColdtrackNetworkError, ColdtrackTimeoutError, RateBudget } from '@coldtrack/client';
import type { ClientEvent } from '@coldtrack/client';

const PAGE = {
  data: [],
  meta: {
    company_id: 1,
    filters: {},
    pagination: { page: 1, page_size: 1000, total_count: 0, total_pages: 0, has_next: false, has_previous: false },
  },
};

interface Scripted {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** A fetch answering from `answer(n)` (n: the request's number from 1), counting requests. */
function scriptedFetch(answer: (n: number, url: URL, init: RequestInit) => Scripted) {
  const seen: { url: URL; init: RequestInit; at: number }[] = [];
  const fetchImpl = (async (input: URL | string, init: RequestInit = {}) => {
    const url = new URL(String(input));
    seen.push({ url, init, at: Date.now() });
    const { status = 200, body = PAGE, headers = {}, delayMs = 0 } = answer(seen.length, url, init);
    if (delayMs) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, delayMs);
        init.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(init.signal!.reason);
        });
      });
    }
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  }) as typeof fetch;
  return { fetch: fetchImpl, seen };
}

const errorBody = (code: string, message: string, details?: Record<string, unknown>) => ({
  error: { code, message, ...(details ? { details } : {}) },
});
const client = (
  fetchImpl: typeof fetch,
  events: ClientEvent[] = [],
  extra: Partial<ConstructorParameters<typeof ColdtrackClient>[0]> = {},
) =>
  new ColdtrackClient({
    baseUrl: 'http://partner.test/base',
    token: 'ctk_test',
    fetch: fetchImpl,
    budget: new RateBudget(),
    onEvent: (event) => events.push(event),
    ...extra,
  });

t.test('sends the token, asks for br/gzip, builds the query (numbers, lists) under the base path', async (t) => {
  const { fetch, seen } = scriptedFetch(() => ({}));
  await client(fetch).sensorData({
    cooling_unit_id: 7,
    specification_type: ['TEMPERATURE', 'HUMIDITY'],
    aggregation: 'hourly',
    page: 2,
    start_date: undefined,
  });
  const [{ url, init }] = seen as [(typeof seen)[0]];
  t.equal(url.pathname, '/base/api/v1/sensor-data');
  t.same(Object.fromEntries(url.searchParams), {
    cooling_unit_id: '7',
    specification_type: 'TEMPERATURE,HUMIDITY',
    aggregation: 'hourly',
    page: '2',
  });
  const headers = init.headers as Record<string, string>;
  t.equal(headers.authorization, 'Bearer ctk_test');
  t.equal(headers['accept-encoding'], 'br, gzip');
});

t.test('400, 401, 403, 404: a typed error at once, never retried', async (t) => {
  const cases: Array<[number, string, Record<string, unknown> | undefined]> = [
    [400, 'invalid_request', { field: 'aggregation' }],
    [401, 'unauthorized', undefined],
    [403, 'insufficient_scope', { required_scope: 'sensor_data' }],
    [404, 'not_found', undefined],
  ];
  for (const [status, code, details] of cases) {
    const { fetch, seen } = scriptedFetch(() => ({
      status,
      body: errorBody(code, `it is ${code}`, details),
      headers: { 'x-request-id': 'req-1' },
    }));
    const error = await client(fetch)
      .sensorData()
      .catch((e: unknown) => e);
    t.type(error, ColdtrackApiError, `${status}: ColdtrackApiError`);
    t.match(error, {
      status,
      code,
      message: `it is ${code}`,
      details,
      requestId: 'req-1',
      request: 'GET /api/v1/sensor-data',
      permanent: true,
    });
    t.equal(seen.length, 1, `${status}: one request, no retry`);
  }
});

t.test('503: Retry-After plus jitter, then success; bounded attempts', async (t) => {
  const events: ClientEvent[] = [];
  const { fetch, seen } = scriptedFetch((n) =>
    n <= 2 ? { status: 503, body: errorBody('unavailable', 'down'), headers: { 'retry-after': '1' } } : {},
  );
  const started = Date.now();
  await client(fetch, events, { random: () => 0.5, backoffMs: 200 }).users();
  const retries = events.filter((event) => event.type === 'retry');
  t.equal(seen.length, 3, 'two 503s, then the answer');
  t.same(
    retries.map((event) => event.type === 'retry' && [event.status, event.reason, Math.round(event.ms)]),
    [
      [503, 'unavailable', 1100],
      [503, 'unavailable', 1200],
    ],
    'each wait: Retry-After (1 s) + jitter of the doubling step (0.5 x 200 ms, 0.5 x 400 ms)',
  );
  t.ok(seen[1]!.at - seen[0]!.at >= 1090, 'the second attempt waited Retry-After');
  t.ok(Date.now() - started >= 2280);

  const { fetch: down, seen: tried } = scriptedFetch(() => ({
    status: 503,
    body: errorBody('unavailable', 'down'),
    headers: { 'retry-after': '0' },
  }));
  const error = await client(down, [], { retries: 2, backoffMs: 10 })
    .users()
    .catch((e: unknown) => e);
  t.match(error, { status: 503, code: 'unavailable' }, 'still down: the 503 surfaces');
  t.equal(tried.length, 3, 'after 1 + 2 attempts');
});

t.test('429: waits until X-RateLimit-Reset, then succeeds', async (t) => {
  const events: ClientEvent[] = [];
  const resetAt = Math.ceil(Date.now() / 1000) + 1;
  const { fetch, seen } = scriptedFetch((n): Scripted =>
    n === 1
      ? {
          status: 429,
          body: errorBody('rate_limited', 'slow down'),
          headers: { 'retry-after': '1', 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(resetAt) },
        }
      : { headers: { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '99', 'x-ratelimit-reset': String(resetAt + 60) } },
  );
  await client(fetch, events).impact();
  t.equal(seen.length, 2);
  t.ok(seen[1]!.at >= resetAt * 1000, 'the retry went out once the window had ended');
  t.ok(
    events.some((event) => event.type === 'rate-limit-wait'),
    'the wait is reported as a rate-limit wait',
  );
});

t.test('the budget: concurrent requests never exceed what the window has left, then wait for its end', async (t) => {
  const resetAt = Math.ceil(Date.now() / 1000) + 2;
  let served = 0;
  const { fetch, seen } = scriptedFetch(() => {
    served++;
    // the window allows 5 requests; the 6th and later belong to the next one
    const next = served > 5;
    return {
      delayMs: 20,
      headers: {
        'x-ratelimit-limit': '5',
        'x-ratelimit-remaining': String(next ? 5 - (served - 5) : 5 - served),
        'x-ratelimit-reset': String(next ? resetAt + 60 : resetAt),
      },
    };
  });
  const events: ClientEvent[] = [];
  const partner = client(fetch, events);
  await Promise.all(Array.from({ length: 8 }, () => partner.sensorData()));
  const early = seen.filter((request) => request.at < resetAt * 1000);
  t.equal(early.length, 5, 'five requests in the first window: the budget, no more (no 429)');
  t.equal(seen.length, 8, 'the other three after its end');
  t.equal(events.filter((event) => event.type === 'rate-limit-wait').length, 1, 'one wait announced for the window, not one per request');
});

t.test('two clients of one token share its budget', async (t) => {
  const a = new ColdtrackClient({ baseUrl: 'http://shared.test', token: 'ctk_shared' });
  const b = new ColdtrackClient({ baseUrl: 'http://shared.test/', token: 'ctk_shared' });
  const c = new ColdtrackClient({ baseUrl: 'http://shared.test', token: 'ctk_other' });
  t.equal(a.budget, b.budget);
  t.not(a.budget, c.budget);
});

t.test('a timeout is a ColdtrackTimeoutError (retried for GETs); an abort rejects with its reason, at once', async (t) => {
  const { fetch, seen } = scriptedFetch(() => ({ delayMs: 500 }));
  const error = await client(fetch, [], { timeoutMs: 50, retries: 1, backoffMs: 10 })
    .users()
    .catch((e: unknown) => e);
  t.type(error, ColdtrackTimeoutError);
  t.equal(seen.length, 2, 'tried twice');

  const controller = new AbortController();
  const { fetch: slow } = scriptedFetch(() => ({ delayMs: 5000 }));
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('caller gave up')), 50);
  const aborted = await client(slow)
    .users({}, { signal: controller.signal })
    .catch((e: unknown) => e);
  t.match(aborted, { message: 'caller gave up' });
  t.ok(Date.now() - started < 1000, 'at once');

  const refused = (async () => {
    throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
  }) as typeof fetch;
  const network = await client(refused, [], { retries: 0 })
    .users()
    .catch((e: unknown) => e);
  t.type(network, ColdtrackNetworkError);
  t.match(network, { message: /ECONNREFUSED/ });
});

t.test('creating a token is not repeated after a 503 (a retry could create a second one)', async (t) => {
  const { fetch, seen } = scriptedFetch(() => ({ status: 503, body: errorBody('unavailable', 'down'), headers: { 'retry-after': '0' } }));
  const error = await client(fetch)
    .tokens.create({ name: 'x', scopes: ['users'] })
    .catch((e: unknown) => e);
  t.match(error, { status: 503 });
  t.equal(seen.length, 1);
  t.equal((seen[0]!.init.headers as Record<string, string>)['content-type'], 'application/json');
});
