// One token's request budget as the service last reported it (X-RateLimit-Limit, -Remaining,
// -Reset), shared by every request made with that token, concurrent ones included: a request
// starts only when the budget has room for it beside the requests already in flight, otherwise
// it waits for them to answer or for the window to end. The service counts every request, a
// refused one too, so a client that waits here is never refused in steady state.
//
// The service's windows are fixed: a window starts with the first request after the previous one
// ended and allows X-RateLimit-Limit requests; X-RateLimit-Reset is when it ends (Unix seconds,
// rounded up). After that instant the budget is unknown until the next answer says what the new
// window holds, so one request goes first and the others follow once it answers.

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** when the window ends, by the service's clock (ms since the epoch) */
  resetAtMs: number;
}

export interface RateLimitObservation extends RateLimitState {
  /** the answer's Date header (ms since the epoch, whole seconds), to notice a skewed clock */
  serverDateMs?: number | undefined;
}

/** A limit on how long acquire() waits for a window to end: over it, `refuse(ms)` is thrown instead. */
export interface WaitLimit {
  maxWaitMs: number;
  refuse: (ms: number) => Error;
}

/** setTimeout's largest delay; a longer one fires after 1 ms (and a wait would spin). */
const MAX_TIMER_MS = 2_147_483_647;

export interface RateBudgetOptions {
  /** the local clock (ms since the epoch); injected by tests */
  now?: () => number;
  /** waited past the window's end before the next request, for clocks a little apart */
  marginMs?: number;
}

/** Differences in Reset below this are the same window (Reset is rounded to whole seconds). */
const SAME_WINDOW_MS = 1500;

export class RateBudget {
  private readonly now: () => number;
  private readonly marginMs: number;
  private state: RateLimitState | null = null;
  /** the service's clock minus ours, when the Date header shows they are more than a second apart */
  private skewMs = 0;
  private inFlight = 0;
  private readonly wakers = new Set<() => void>();
  /** the window end a wait was last announced for: concurrent waiters announce it once */
  private announcedResetMs = 0;

  constructor(options: RateBudgetOptions = {}) {
    this.now = options.now ?? Date.now;
    this.marginMs = options.marginMs ?? 100;
  }

  /** What the service last said, while its window lasts; null when unknown. */
  get current(): Readonly<RateLimitState> | null {
    return this.state;
  }

  /** How long from now until an instant of the service's clock (its Reset), by the local clock. */
  msUntil(serviceTimeMs: number): number {
    return Math.max(0, serviceTimeMs - this.skewMs + this.marginMs - this.now());
  }

  /** Local time at which the known window ends (and a new one may start). */
  private windowEndLocal(): number {
    return this.state ? this.state.resetAtMs - this.skewMs + this.marginMs : 0;
  }

  /**
   * Resolves when a request may start, and counts it as in flight until release(). `onWait` is
   * told once per window when the wait is for the window to end (not just for answers in flight).
   * With `limit`, a window that ends further ahead than `limit.maxWaitMs` (a Reset the service
   * set hours or years ahead) throws `limit.refuse(ms)` instead of waiting.
   */
  async acquire(signal?: AbortSignal, onWait?: (ms: number, untilMs: number) => void, limit?: WaitLimit): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.now();
      if (this.state && now >= this.windowEndLocal()) this.state = null;
      const room = this.state ? this.state.remaining - this.inFlight > 0 : this.inFlight === 0;
      if (room) {
        this.inFlight++;
        return;
      }
      let timeoutMs: number | undefined;
      if (this.state) {
        const end = this.windowEndLocal();
        timeoutMs = end - now;
        if (limit && this.state.remaining <= 0 && !(timeoutMs <= limit.maxWaitMs)) throw limit.refuse(timeoutMs);
        if (this.state.remaining <= 0 && this.announcedResetMs !== this.state.resetAtMs) {
          this.announcedResetMs = this.state.resetAtMs;
          onWait?.(timeoutMs, end);
        }
      }
      await this.wait(signal, timeoutMs);
    }
  }

  /** The request acquire() counted has an answer (with its rate-limit headers), or failed (null). */
  release(observation: RateLimitObservation | null): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (observation) this.observe(observation);
    this.notify();
  }

  /** A 429: nothing more until `resetAtMs` (the service's clock). */
  exhaust(resetAtMs: number, limit?: number): void {
    const state = this.state;
    this.state = { limit: limit ?? state?.limit ?? 0, remaining: 0, resetAtMs: Math.max(resetAtMs, state?.resetAtMs ?? 0) };
    this.notify();
  }

  private observe({ limit, remaining, resetAtMs, serverDateMs }: RateLimitObservation): void {
    const now = this.now();
    if (serverDateMs !== undefined) {
      // the Date header has whole seconds: only a clock off by more than that is corrected
      const lag = serverDateMs - now;
      this.skewMs = lag > 1000 || lag < -2000 ? lag + 500 : 0;
    }
    // an answer from a window that has ended since (it was slow): nothing to learn from it
    if (resetAtMs - this.skewMs + this.marginMs <= now) return;
    const state = this.state;
    if (!state || resetAtMs > state.resetAtMs + SAME_WINDOW_MS) {
      this.state = { limit, remaining, resetAtMs };
    } else if (resetAtMs >= state.resetAtMs - SAME_WINDOW_MS) {
      // answers of one window may arrive out of order: the lowest remaining is the latest count
      this.state = { limit, remaining: Math.min(state.remaining, remaining), resetAtMs: Math.max(state.resetAtMs, resetAtMs) };
    }
  }

  private notify(): void {
    for (const wake of [...this.wakers]) wake();
  }

  private wait(signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        cleanUp();
        resolve();
      };
      const aborted = () => {
        cleanUp();
        reject(signal!.reason);
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(done, Math.min(MAX_TIMER_MS, Math.max(0, timeoutMs)));
      const cleanUp = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        signal?.removeEventListener('abort', aborted);
      };
      this.wakers.add(done);
      signal?.addEventListener('abort', aborted, { once: true });
    });
  }
}

const shared = new Map<string, RateBudget>();

/**
 * The process-wide budget of one token at one service: every client made with the same base URL
 * and token shares it, so two clients of one token do not spend its budget twice.
 */
export function rateBudgetFor(origin: string, credential: string): RateBudget {
  const key = `${origin}\u0000${credential}`;
  let budget = shared.get(key);
  if (!budget) {
    budget = new RateBudget();
    shared.set(key, budget);
  }
  return budget;
}
