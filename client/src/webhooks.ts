// Verifying the service's webhook deliveries (docs/webhooks.md, "For partners"): Standard Webhooks
// signatures, checked with node:crypto so the package stays without dependencies. Verify the raw
// body as received, before parsing it; keep the webhook-ids you processed (delivery is at least once).
//
//   const event = verifyWebhook(process.env.COLDTRACK_WEBHOOK_SECRET!, rawBody, request.headers);
//   if (seen.has(event.id)) return; // a retry or a replay of one already handled
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a verified delivery carries. */
export interface WebhookEvent<Data = Record<string, unknown>> {
  /** the webhook-id header: the same on every attempt and replay of the event */
  id: string;
  /** api_token.created, api_token.expiring, ... (docs/webhooks.md, "Events") */
  type: string;
  /** when the change happened (ISO 8601) */
  timestamp: string;
  data: Data;
}

/** A delivery that is not the service's, was altered, or is too old or too far ahead (a replayed capture). */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyOptions {
  /** how far webhook-timestamp may be from now, in seconds (default 300) */
  toleranceSeconds?: number;
  /** the time to judge it at (default: now) */
  now?: Date;
}

const SECRET_PREFIX = 'whsec_';

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string | undefined {
  const value =
    typeof headers.get === 'function'
      ? (headers as { get(name: string): string | null }).get(name)
      : (headers as Record<string, unknown>)[name];
  if (Array.isArray(value)) return value.length === 1 ? String(value[0]) : undefined;
  return typeof value === 'string' ? value : undefined;
}

const keyOf = (secret: string) => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');

/**
 * The event of a delivery whose signature one of `secrets` made (one secret, or two while the
 * endpoint's secret is rotated); throws WebhookVerificationError otherwise. `headers`: Node's
 * request.headers or a fetch Headers.
 */
export function verifyWebhook<Data = Record<string, unknown>>(
  secrets: string | string[],
  rawBody: string | Uint8Array,
  headers: Headers,
  options: VerifyOptions = {},
): WebhookEvent<Data> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError('webhook-timestamp is too far from now (a replayed or delayed delivery)');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), body]);
  const given = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  const matched = (Array.isArray(secrets) ? secrets : [secrets]).some((secret) => {
    const expected = createHmac('sha256', keyOf(secret)).update(signed).digest();
    return given.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected));
  });
  if (!matched) throw new WebhookVerificationError('no signature matches the secret');
  let payload: { type?: unknown; timestamp?: unknown; data?: unknown };
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
  return { id, type: String(payload.type), timestamp: String(payload.timestamp), data: payload.data as Data };
}
