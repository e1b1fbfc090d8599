// One call to the service, made to succeed when it can: the token's budget is waited for before
// sending (rate-budget.ts); a 429 waits for X-RateLimit-Reset; a 503 (also 502/504, timeouts and
// network failures) is retried after Retry-After plus a jittered exponential backoff, a bounded
// number of times. 400/401/403/404 and the other client errors are never retried: they throw a
// ColdtrackApiError at once. Calls that are not safe to repeat (creating or rotating a token) are
// retried after a 429 only, which the service answers before doing anything. Global fetch (Node
// 18 and later) asks for brotli or gzip and decompresses.
// Nothing from the wire is trusted: a wait the service asks for (Retry-After, X-RateLimit-Reset)
// longer than maxWaitMs, or one that would take this call's waits past maxTotalWaitMs, is not
// slept but thrown as a ColdtrackRetryLaterError; a success body that is not JSON is a
// ColdtrackInvalidResponseError; the service's messages are redacted of tokens (redact.ts).
// A GET of a data endpoint sends back the ETag of the last answer this client kept for its URL
// (If-None-Match): a 304, which the service does not count against the rate limit, returns that
// answer again. The answers kept are bounded (conditionalCache).
// The attempts and their order are here; the parts, one concern each: call-waits.ts (sleeping,
// backoff, the wait limits), rate-limit-headers.ts (X-RateLimit-*, Retry-After), kept-answers.ts
// (the ETag cache of conditional requests), answer-bodies.ts (an answer's body or its error).
import { apiErrorOf, successBody } from './answer-bodies.js';
import { backoff, CallWaits, DEFAULT_MAX_TOTAL_WAIT_MS, DEFAULT_MAX_WAIT_MS, MAX_TIMER_MS, sleep } from './call-waits.js';
import { type ColdtrackApiError, ColdtrackNetworkError, ColdtrackTimeoutError } from './errors.js';
import { CONDITIONAL_PATHS, DEFAULT_CONDITIONAL_CACHE, type KeptAnswer, KeptAnswers } from './kept-answers.js';
import type { RateBudget, RateLimitObservation } from './rate-budget.js';
import { rateLimitOf } from './rate-limit-headers.js';
import { redactorFor } from './redact.js';
import { DEFAULT_USER_AGENT } from './version.js';

export { DEFAULT_CONDITIONAL_CACHE } from './kept-answers.js';
export { DEFAULT_MAX_TOTAL_WAIT_MS, DEFAULT_MAX_WAIT_MS, MAX_TIMER_MS } from './call-waits.js';

export type ClientEvent =
  /** a request is about to be sent (every attempt) */
  | { type: 'request'; method: string; path: string; attempt: number }
  /** an answer arrived */
  | { type: 'response'; method: string; path: string; status: number; ms: number; rateLimit: RateLimitObservation | null }
  /** requests wait for the token's rate-limit window to end (once per window) */
  | { type: 'rate-limit-wait'; ms: number; until: Date }
  /** a failed attempt is repeated after `ms` */
  | {
      type: 'retry';
      method: string;
      path: string;
      reason: 'rate_limited' | 'unavailable' | 'bad_gateway' | 'timeout' | 'network';
      status: number | null;
      attempt: number;
      ms: number;
    };

export interface TransportOptions {
  baseUrl: string;
  /** `Authorization: Bearer <token>`: an API token (data) or an employee JWT (management) */
  token: string;
  budget: RateBudget;
  /** per attempt, from sending to the last byte of the answer; default 30 s */
  timeoutMs?: number;
  /** attempts after the first for 503, 502/504, timeouts and network errors; default 4 */
  retries?: number;
  /** 429s waited out before giving up; default 5 (none arrive while this client is the token's only user) */
  rateLimitRetries?: number;
  /** first backoff step; doubles per attempt up to maxBackoffMs; default 1 s */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * The longest single wait the service may ask for (Retry-After, X-RateLimit-Reset) that the
   * client takes; a longer one throws ColdtrackRetryLaterError at once. Default 120 s.
   */
  maxWaitMs?: number;
  /** The longest one call waits after refusals and failures, all retries together; default 10 min. */
  maxTotalWaitMs?: number;
  /** default br, gzip */
  acceptEncoding?: string;
  fetch?: typeof fetch;
  onEvent?: (event: ClientEvent) => void;
  /** [0, 1): backoff jitter; injected by tests */
  random?: () => number;
  now?: () => number;
  /** the User-Agent header, which the service keeps as the token's last client; default `@coldtrack/client/<version>` */
  userAgent?: string;
  /**
   * Answers of data endpoints kept, by URL, to ask again with If-None-Match: a 304 returns the
   * kept answer and costs none of the token's budget. Default 32 (the least recently used go first);
   * 0 keeps none.
   */
  conditionalCache?: number;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** overrides the client's per-attempt timeout */
  timeoutMs?: number | undefined;
}

export interface Call extends CallOptions {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, unknown> | undefined;
  body?: unknown;
  /** repeating it after a lost answer does no harm (GETs, revoke); default: GET only */
  idempotent?: boolean;
  /**
   * a 2xx answer's body is the caller's to read (a bulk pull): call() resolves with the Response
   * once its headers arrived, and the timeout covers only that much; `signal` still aborts the body
   */
  stream?: boolean;
}

function queryString(query: Record<string, unknown> | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    search.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** What every attempt of one call sends, and how its answer is read. */
interface PreparedCall {
  method: Call['method'];
  path: string;
  signal: AbortSignal | undefined;
  /** `METHOD /path`, as errors name the call */
  request: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
  idempotent: boolean;
  /** a data GET: sends the kept answer's ETag, keeps the new answer */
  conditional: boolean;
  stream: boolean;
}

interface AnsweredAttempt {
  answered: true;
  response: Response;
  /** the body ('' when streamed) */
  text: string;
  streamed: boolean;
  /** the answer kept for the URL, whose ETag was sent */
  kept: KeptAnswer | undefined;
  started: number;
}

interface FailedAttempt {
  answered: false;
  failure: ColdtrackTimeoutError | ColdtrackNetworkError;
  timedOut: boolean;
}

type Attempt = AnsweredAttempt | FailedAttempt;

export class Transport {
  private readonly base: URL;
  private readonly fetch: typeof fetch;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly redact: (text: string) => string;
  private readonly maxWaitMs: number;
  private readonly maxTotalWaitMs: number;
  private readonly kept: KeptAnswers;

  constructor(private readonly options: TransportOptions) {
    // a base URL with a path (https://host/coldtrack) keeps it: paths are joined, not replaced
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.fetch = options.fetch ?? globalThis.fetch;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    this.redact = redactorFor(options.token);
    this.maxWaitMs = Math.min(MAX_TIMER_MS, options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
    this.maxTotalWaitMs = options.maxTotalWaitMs ?? DEFAULT_MAX_TOTAL_WAIT_MS;
    this.kept = new KeptAnswers(options.conditionalCache ?? DEFAULT_CONDITIONAL_CACHE);
  }

  get budget(): RateBudget {
    return this.options.budget;
  }

  private emit(event: ClientEvent) {
    this.options.onEvent?.(event);
  }

  /**
   * One call, attempt after attempt: wait for the token's budget, send, then either return the
   * answer, or wait out a 429, or retry a failure or a 502/503/504 (each throws when it may not).
   */
  async call<T>(call: Call): Promise<T> {
    const prepared = this.prepare(call);
    const waits = new CallWaits(prepared.request, { maxWaitMs: this.maxWaitMs, maxTotalWaitMs: this.maxTotalWaitMs }, this.now);
    const budgetLimits = { maxWaitMs: this.maxWaitMs, refuse: (ms: number) => waits.tooLong(ms, 'maxWaitMs') };
    for (let attempt = 1; ; attempt++) {
      await this.budget.acquire(
        call.signal,
        (ms, until) => this.emit({ type: 'rate-limit-wait', ms, until: new Date(until) }),
        budgetLimits,
      );
      const sent = await this.send(prepared, attempt);
      if (!sent.answered) {
        await this.retryFailure(prepared, waits, sent, attempt);
        continue;
      }
      const rateLimit = this.observe(prepared, sent);
      const answer = this.answerOf<T>(prepared, sent);
      if (answer) return answer.value;
      const error = apiErrorOf(sent.response, prepared.request, sent.text, this.redact);
      if (sent.response.status === 429) {
        this.waitOutRateLimit(prepared, waits, error, rateLimit, attempt);
        continue; // acquire() waits for the window to end
      }
      await this.retryRefusal(prepared, waits, error, sent.response.status, attempt);
    }
  }

  /** What every attempt of the call sends, worked out once. */
  private prepare(call: Call): PreparedCall {
    const { method, path } = call;
    return {
      method,
      path,
      signal: call.signal,
      request: `${method} ${path}`,
      url: new URL(path.replace(/^\//, '') + queryString(call.query), this.base),
      headers: {
        authorization: `Bearer ${this.options.token}`,
        accept: 'application/json',
        'accept-encoding': this.options.acceptEncoding ?? 'br, gzip',
        'user-agent': this.options.userAgent || DEFAULT_USER_AGENT,
        ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: call.body !== undefined ? JSON.stringify(call.body) : undefined,
      timeoutMs: call.timeoutMs ?? this.options.timeoutMs ?? 30_000,
      idempotent: call.idempotent ?? method === 'GET',
      // a data GET asks whether the answer kept for its URL is still the current one
      conditional: method === 'GET' && CONDITIONAL_PATHS.has(path),
      stream: Boolean(call.stream),
    };
  }

  /** One attempt, under its own timeout: the answer (its body read, unless streamed), or why none came. */
  private async send(call: PreparedCall, attempt: number): Promise<Attempt> {
    const { method, path, request, signal, timeoutMs } = call;
    this.emit({ type: 'request', method, path, attempt });
    const started = this.now();
    let streamed = false;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new ColdtrackTimeoutError(request, timeoutMs)), timeoutMs);
    const forward = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', forward, { once: true });
    const kept = call.conditional ? this.kept.get(call.url.href) : undefined;
    try {
      const headers = kept ? { ...call.headers, 'if-none-match': kept.etag } : call.headers;
      const response = await this.fetch(call.url, { method, headers, body: call.body, signal: controller.signal });
      streamed = call.stream && response.ok;
      const text = streamed ? '' : await response.text(); // the deadline covers the body too
      return { answered: true, response, text, streamed, kept, started };
    } catch (error) {
      this.budget.release(null);
      if (signal?.aborted) throw signal.reason;
      const timedOut = controller.signal.reason instanceof ColdtrackTimeoutError;
      const failure = timedOut
        ? (controller.signal.reason as ColdtrackTimeoutError)
        : new ColdtrackNetworkError(request, error, this.redact);
      return { answered: false, failure, timedOut };
    } finally {
      clearTimeout(timer);
      if (!streamed) signal?.removeEventListener('abort', forward);
    }
  }

  /** A timeout or a network failure: retried with backoff when the call is safe to repeat, else thrown. */
  private async retryFailure(call: PreparedCall, waits: CallWaits, sent: FailedAttempt, attempt: number) {
    if (!call.idempotent || ++waits.failures > (this.options.retries ?? 4)) throw sent.failure;
    const ms = backoff(this.options, this.random, waits.failures, 0);
    waits.allow(ms, 0);
    const reason = sent.timedOut ? 'timeout' : 'network';
    await this.retryAfter({ method: call.method, path: call.path, reason, status: null, attempt, ms }, call.signal);
  }

  /** The answer's rate-limit headers go back to the budget; the answer is reported. */
  private observe(call: PreparedCall, sent: AnsweredAttempt): RateLimitObservation | null {
    const rateLimit = rateLimitOf(sent.response.headers);
    this.budget.release(rateLimit);
    const { method, path } = call;
    this.emit({ type: 'response', method, path, status: sent.response.status, ms: this.now() - sent.started, rateLimit });
    return rateLimit;
  }

  /** The call's result when the answer is one: a stream, the kept answer (304), or a 2xx body; null for a refusal. */
  private answerOf<T>(call: PreparedCall, sent: AnsweredAttempt): { value: T } | null {
    const { response, text, kept } = sent;
    if (sent.streamed) return { value: response as T };
    // not modified: the answer kept is the current one
    if (response.status === 304 && kept) return { value: successBody<T>(response, call.request, kept.text) };
    if (!response.ok) return null;
    const value = successBody<T>(response, call.request, text);
    if (call.conditional) this.kept.keep(call.url.href, response.headers.get('etag'), text);
    return { value };
  }

  /** A 429: the budget is spent until X-RateLimit-Reset (data endpoints), else Retry-After; thrown past rateLimitRetries. */
  private waitOutRateLimit(
    call: PreparedCall,
    waits: CallWaits,
    error: ColdtrackApiError,
    rateLimit: RateLimitObservation | null,
    attempt: number,
  ) {
    if (++waits.refusals > (this.options.rateLimitRetries ?? 5)) throw error;
    // without the rate-limit headers the wait is Retry-After itself, read against one clock reading
    // (two readings a millisecond apart would report a wait the service never asked for)
    const retryAfterMs = (error.retryAfterSeconds ?? 1) * 1000;
    const resetAtMs = rateLimit?.resetAtMs ?? this.now() + retryAfterMs;
    const ms = rateLimit ? this.budget.msUntil(resetAtMs) : retryAfterMs;
    waits.allow(ms, ms, error);
    this.budget.exhaust(resetAtMs, rateLimit?.limit);
    this.emit({ type: 'retry', method: call.method, path: call.path, reason: 'rate_limited', status: 429, attempt, ms });
  }

  /** Any other refusal: a 502/503/504 of a call safe to repeat is retried after Retry-After and backoff; the rest thrown. */
  private async retryRefusal(call: PreparedCall, waits: CallWaits, error: ColdtrackApiError, status: number, attempt: number) {
    // a call that is not safe to repeat (creating a token) might have been done before the failure
    const retryable = call.idempotent && (status === 503 || status === 502 || status === 504);
    if (!retryable || ++waits.failures > (this.options.retries ?? 4)) throw error;
    const serverMs = (error.retryAfterSeconds ?? 0) * 1000;
    const ms = backoff(this.options, this.random, waits.failures, Math.min(serverMs, this.maxWaitMs));
    waits.allow(ms, serverMs, error);
    const reason = status === 503 ? 'unavailable' : 'bad_gateway';
    await this.retryAfter({ method: call.method, path: call.path, reason, status, attempt, ms }, call.signal);
  }

  private async retryAfter(event: Omit<Extract<ClientEvent, { type: 'retry' }>, 'type'>, signal: AbortSignal | undefined) {
    this.emit({ type: 'retry', ...event });
    await sleep(event.ms, signal);
  }
}
