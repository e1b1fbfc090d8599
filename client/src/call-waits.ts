// The waits of one call after refusals and failures: the sleep itself (abortable, within
// setTimeout's range), the jittered exponential backoff step, and the limits on what the service
// may make a call wait (maxWaitMs for one wait, maxTotalWaitMs for all of them together), which
// throw a ColdtrackRetryLaterError rather than sleep.
import { type ColdtrackApiError, ColdtrackRetryLaterError } from './errors.js';

/** The longest a single wait the service asks for is taken: twice its one-minute rate-limit window. */
export const DEFAULT_MAX_WAIT_MS = 120_000;
/** The longest one call spends in waits after refusals and failures (429, 503, retries), together. */
export const DEFAULT_MAX_TOTAL_WAIT_MS = 600_000;
/** setTimeout's largest delay (2^31 - 1 ms); a longer one would fire after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;

export const sleep = (ms: number, signal?: AbortSignal) =>
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
      Math.min(MAX_TIMER_MS, Math.max(0, ms)),
    );
    signal?.addEventListener('abort', aborted, { once: true });
  });

export interface BackoffOptions {
  /** first step; doubles per attempt up to maxBackoffMs; default 1 s */
  backoffMs?: number | undefined;
  maxBackoffMs?: number | undefined;
}

/** Retry-After, then a jittered exponential step on top: never sooner than the service asked. */
export function backoff(options: BackoffOptions, random: () => number, attempt: number, retryAfterMs: number): number {
  const step = Math.min(options.maxBackoffMs ?? 30_000, (options.backoffMs ?? 1000) * 2 ** (attempt - 1));
  return retryAfterMs + Math.max(100, random() * step);
}

/** The retries one call has made, and the waits it took, held to maxWaitMs and maxTotalWaitMs. */
export class CallWaits {
  failures = 0;
  refusals = 0;
  /** ms this call has waited (or is about to) after refusals and failures */
  private waited = 0;

  constructor(
    private readonly request: string,
    private readonly limits: { maxWaitMs: number; maxTotalWaitMs: number },
    private readonly now: () => number,
  ) {}

  tooLong(serverMs: number, limit: 'maxWaitMs' | 'maxTotalWaitMs', refusal?: ColdtrackApiError): ColdtrackRetryLaterError {
    const until = this.now() + serverMs;
    const retryAt = Number.isFinite(until) && Math.abs(until) <= 8.64e15 ? new Date(until) : null;
    return new ColdtrackRetryLaterError(this.request, serverMs / 1000, retryAt, this.limits[limit], limit, refusal);
  }

  /** A wait of `ms`, of which the service asked for `serverMs`: thrown when too long, else counted. */
  allow(ms: number, serverMs: number, refusal?: ColdtrackApiError): void {
    if (!(serverMs <= this.limits.maxWaitMs)) throw this.tooLong(serverMs, 'maxWaitMs', refusal);
    if (this.waited + ms > this.limits.maxTotalWaitMs) throw this.tooLong(serverMs, 'maxTotalWaitMs', refusal);
    this.waited += ms;
  }
}
