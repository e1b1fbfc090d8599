// One call to the service, made to succeed when it can: the token's budget is waited for before
// sending (rate-budget.ts); a 429 waits for X-RateLimit-Reset; a 503 (also 502/504, timeouts and
// network failures) is retried after Retry-After plus a jittered exponential backoff, a bounded
// number of times. 400/401/403/404 and the other client errors are never retried: they throw a
// ColdtrackApiError at once. Calls that are not safe to repeat (creating or rotating a token) are
// retried after a 429 only, which the service answers before doing anything. Global fetch (Node
// 18 and later) asks for brotli or gzip and decompresses.
import { ColdtrackApiError, ColdtrackNetworkError, ColdtrackTimeoutError } from './errors.js';
import type { RateBudget, RateLimitObservation } from './rate-budget.js';

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
  /** default br, gzip */
  acceptEncoding?: string;
  fetch?: typeof fetch;
  onEvent?: (event: ClientEvent) => void;
  /** [0, 1): backoff jitter; injected by tests */
  random?: () => number;
  now?: () => number;
  userAgent?: string;
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
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const aborted = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', aborted);
        resolve();
      },
      Math.max(0, ms),
    );
    signal?.addEventListener('abort', aborted, { once: true });
  });

function queryString(query: Record<string, unknown> | undefined): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    search.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function rateLimitOf(headers: Headers): RateLimitObservation | null {
  const limit = Number(headers.get('x-ratelimit-limit'));
  const remaining = Number(headers.get('x-ratelimit-remaining'));
  const reset = Number(headers.get('x-ratelimit-reset'));
  if (!headers.has('x-ratelimit-reset') || !Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(reset)) return null;
  const date = Date.parse(headers.get('date') ?? '');
  return { limit, remaining, resetAtMs: reset * 1000, serverDateMs: Number.isNaN(date) ? undefined : date };
}

function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}

async function apiErrorOf(response: Response, request: string, text: string): Promise<ColdtrackApiError> {
  let body: { error?: { code?: string; message?: string; details?: Record<string, unknown> } } | undefined;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    body = undefined;
  }
  const error = body?.error;
  return new ColdtrackApiError(
    response.status,
    error?.code ?? `http_${response.status}`,
    error?.message ?? `${request}: HTTP ${response.status}`,
    error?.details,
    request,
    response.headers.get('x-request-id'),
    retryAfterSeconds(response.headers),
  );
}

export class Transport {
  private readonly base: URL;
  private readonly fetch: typeof fetch;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(private readonly options: TransportOptions) {
    // a base URL with a path (https://host/coldtrack) keeps it: paths are joined, not replaced
    this.base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
    this.fetch = options.fetch ?? globalThis.fetch;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
  }

  get budget(): RateBudget {
    return this.options.budget;
  }

  private emit(event: ClientEvent) {
    this.options.onEvent?.(event);
  }

  /** Retry-After, then a jittered exponential step on top: never sooner than the service asked. */
  private backoff(attempt: number, retryAfterMs: number): number {
    const step = Math.min(this.options.maxBackoffMs ?? 30_000, (this.options.backoffMs ?? 1000) * 2 ** (attempt - 1));
    return retryAfterMs + Math.max(100, this.random() * step);
  }

  async call<T>(call: Call): Promise<T> {
    const { method, path, signal } = call;
    const idempotent = call.idempotent ?? method === 'GET';
    const url = new URL(path.replace(/^\//, '') + queryString(call.query), this.base);
    const request = `${method} ${path}`;
    const timeoutMs = call.timeoutMs ?? this.options.timeoutMs ?? 30_000;
    const retries = this.options.retries ?? 4;
    const rateLimitRetries = this.options.rateLimitRetries ?? 5;
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.token}`,
      accept: 'application/json',
      'accept-encoding': this.options.acceptEncoding ?? 'br, gzip',
      ...(this.options.userAgent ? { 'user-agent': this.options.userAgent } : {}),
      ...(call.body !== undefined ? { 'content-type': 'application/json' } : {}),
    };
    const body = call.body !== undefined ? JSON.stringify(call.body) : undefined;
    let failures = 0;
    let refusals = 0;

    for (let attempt = 1; ; attempt++) {
      await this.budget.acquire(signal, (ms, until) => this.emit({ type: 'rate-limit-wait', ms, until: new Date(until) }));
      this.emit({ type: 'request', method, path, attempt });
      const started = this.now();
      let response: Response;
      let text: string;
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new ColdtrackTimeoutError(request, timeoutMs)), timeoutMs);
      const forward = () => controller.abort(signal!.reason);
      signal?.addEventListener('abort', forward, { once: true });
      try {
        response = await this.fetch(url, { method, headers, body, signal: controller.signal });
        text = await response.text(); // the deadline covers the body too
      } catch (error) {
        this.budget.release(null);
        if (signal?.aborted) throw signal.reason;
        const timedOut = controller.signal.reason instanceof ColdtrackTimeoutError;
        const failure = timedOut ? (controller.signal.reason as ColdtrackTimeoutError) : new ColdtrackNetworkError(request, error);
        if (!idempotent || ++failures > retries) throw failure;
        await this.retryAfter(
          { method, path, reason: timedOut ? 'timeout' : 'network', status: null, attempt, ms: this.backoff(failures, 0) },
          signal,
        );
        continue;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', forward);
      }

      const rateLimit = rateLimitOf(response.headers);
      this.budget.release(rateLimit);
      this.emit({ type: 'response', method, path, status: response.status, ms: this.now() - started, rateLimit });
      if (response.ok) return (text ? JSON.parse(text) : undefined) as T;

      const error = await apiErrorOf(response, request, text);
      const status = response.status;
      if (status === 429) {
        if (++refusals > rateLimitRetries) throw error;
        // until X-RateLimit-Reset (data endpoints), else Retry-After
        const resetAtMs = rateLimit?.resetAtMs ?? this.now() + (error.retryAfterSeconds ?? 1) * 1000;
        this.budget.exhaust(resetAtMs, rateLimit?.limit);
        this.emit({ type: 'retry', method, path, reason: 'rate_limited', status, attempt, ms: Math.max(0, resetAtMs - this.now()) });
        continue; // acquire() waits for the window to end
      }
      // a call that is not safe to repeat (creating a token) might have been done before the failure
      const retryable = idempotent && (status === 503 || status === 502 || status === 504);
      if (!retryable || ++failures > retries) throw error;
      const ms = this.backoff(failures, (error.retryAfterSeconds ?? 0) * 1000);
      await this.retryAfter({ method, path, reason: status === 503 ? 'unavailable' : 'bad_gateway', status, attempt, ms }, signal);
    }
  }

  private async retryAfter(event: Omit<Extract<ClientEvent, { type: 'retry' }>, 'type'>, signal: AbortSignal | undefined) {
    this.emit({ type: 'retry', ...event });
    await sleep(event.ms, signal);
  }
}
