// What an answer's headers say about when to ask again: the rate-limit headers of the data
// endpoints (X-RateLimit-Limit, -Remaining, -Reset, with the server's Date), handed back to the
// token's budget (rate-budget.ts), and Retry-After.
import type { RateLimitObservation } from './rate-budget.js';

export function rateLimitOf(headers: Headers): RateLimitObservation | null {
  const limit = Number(headers.get('x-ratelimit-limit'));
  const remaining = Number(headers.get('x-ratelimit-remaining'));
  const reset = Number(headers.get('x-ratelimit-reset'));
  if (!headers.has('x-ratelimit-reset') || !Number.isFinite(limit) || !Number.isFinite(remaining) || !Number.isFinite(reset)) return null;
  const date = Date.parse(headers.get('date') ?? '');
  return { limit, remaining, resetAtMs: reset * 1000, serverDateMs: Number.isNaN(date) ? undefined : date };
}

/** Retry-After in seconds (delta-seconds or an HTTP date); a number no clock reaches is Infinity. */
export function retryAfterSeconds(headers: Headers): number | null {
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return null;
  if (/^\d+$/.test(value)) return Number(value); // 400 digits read as Infinity: waited for by no one
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - Date.now()) / 1000);
}
