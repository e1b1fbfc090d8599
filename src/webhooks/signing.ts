// Signing secrets and signatures (Standard Webhooks, https://www.standardwebhooks.com): a secret is
// `whsec_` and 32 random bytes in base64; a delivery carries webhook-id, webhook-timestamp and
// webhook-signature, `v1,<HMAC-SHA256 of "id.timestamp.body">`, one per secret in force (the new
// one and, during a rotation's grace period, the old one, space-separated).
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret. */
export const newSigningSecret = () => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The Standard Webhooks headers of a body, signed with every secret given (the current one first). */
export function signedHeaders(secrets: string[], messageId: string, at: Date, body: string): SignedHeaders {
  const signatures = secrets.map((secret) => new Webhook(secret).sign(messageId, at, body));
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
