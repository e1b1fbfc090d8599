// The webhook vocabulary: the event types an endpoint may ask for, and when a failed delivery is
// tried again (docs/webhooks.md, "Events" and "Retries").
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from '../time.js';

/** Every event type an endpoint may subscribe to (webhook.test is sent to one endpoint on request, whatever it asked for). */
export const WEBHOOK_EVENT_TYPES = [
  'api_token.created',
  'api_token.rotated',
  'api_token.revoked',
  'api_token.leaked',
  'api_token.expiring',
  'api_token.expired',
  'sensor_data.changed',
  'webhook_endpoint.disabled',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export const TEST_EVENT_TYPE = 'webhook.test';

/** Days before a token's expiry an `api_token.expiring` reminder is sent (0: `api_token.expired`). */
export const REMINDER_DAYS = [30, 7, 1] as const;

/**
 * The wait before each retry of a failed delivery: exponential from 5 seconds, capped at 8 hours;
 * each is jittered by +-20 % (retryDelay), so the retries span at least 25 hours and at most 38.
 * After the last, the delivery has failed and its endpoint is disabled.
 */
export const RETRY_DELAYS_MS = [
  5 * SECOND_MS,
  30 * SECOND_MS,
  2 * MINUTE_MS,
  10 * MINUTE_MS,
  30 * MINUTE_MS,
  HOUR_MS,
  2 * HOUR_MS,
  4 * HOUR_MS,
  8 * HOUR_MS,
  8 * HOUR_MS,
  8 * HOUR_MS,
] as const;
/** Attempts a delivery gets in all: the first and a retry after each delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** The longest a Retry-After may push a retry out. */
export const MAX_RETRY_AFTER_MS = DAY_MS;
const JITTER = 0.2;

/**
 * When the delivery that just failed its `attempt`-th attempt is tried again, or null when that
 * was its last. An endpoint's Retry-After (429, 503) is honoured when it asks for longer.
 */
export function retryAt(now: Date, attempt: number, retryAfterMs: number | null, random = Math.random): Date | null {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  const jittered = base * (1 - JITTER + 2 * JITTER * random());
  const wait = Math.max(jittered, Math.min(retryAfterMs ?? 0, MAX_RETRY_AFTER_MS));
  return new Date(now.getTime() + Math.round(wait));
}

/** A Retry-After header (seconds or an HTTP date) as milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(header: string | undefined, now: Date): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * SECOND_MS;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}
