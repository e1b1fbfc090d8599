// Shared by the leak-report tests: a signing key pair made here (the test plays GitHub), the
// LEAK_REPORT_PUBLIC_KEYS value naming its public half, and reports signed as GitHub signs them:
// ECDSA P-256 over SHA-256 of the raw body bytes, DER, base64.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type pg from 'pg';

export const LEAKS = '/api/v1/token-leaks';
export const KEY_ID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

export interface Signer {
  keyIdentifier: string;
  privateKey: KeyObject;
  publicPem: string;
}

export function makeSigner(keyIdentifier = KEY_ID): Signer {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { keyIdentifier, privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** LEAK_REPORT_PUBLIC_KEYS as GitHub's key endpoint serves them (is_current included). */
export const keysSetting = (...signers: Signer[]) =>
  JSON.stringify(signers.map((signer, i) => ({ key_identifier: signer.keyIdentifier, key: signer.publicPem, is_current: i === 0 })));

export interface Match {
  token: string;
  type?: string;
  url?: string;
  source?: string;
}

export const REPORTED_TYPE = 'coldtrack_api_token';

/** The body GitHub would send for these matches, as text (what is signed). */
export const reportBody = (matches: Match[]) =>
  JSON.stringify(
    matches.map(({ token, type = REPORTED_TYPE, url = 'https://github.com/octo/leaky/blob/abc123/config.env', source = 'content' }) => ({
      token,
      type,
      url,
      source,
    })),
  );

export function signatureOf(signer: Signer, body: string | Buffer) {
  return sign('sha256', Buffer.from(body), { key: signer.privateKey, dsaEncoding: 'der' }).toString('base64');
}

/** The headers of a report of `body` signed by `signer`. */
export const signedHeaders = (signer: Signer, body: string | Buffer) => ({
  'content-type': 'application/json',
  'github-public-key-identifier': signer.keyIdentifier,
  'github-public-key-signature': signatureOf(signer, body),
});

/** A token's revoked flag in the database. */
export async function isRevoked(pool: pg.Pool, tokenId: string) {
  const { rows } = await pool.query<{ revoked: boolean }>('SELECT revoked FROM api_tokens WHERE id = $1', [tokenId]);
  return rows[0]!.revoked;
}

/** Every revoked token (any company), for "revokes nothing" checks. */
export async function revokedCount(pool: pg.Pool) {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens WHERE revoked');
  return rows[0]!.n;
}

/** The leak events of a token, oldest first. */
export async function leakEvents(pool: pg.Pool, tokenId: string) {
  const { rows } = await pool.query<{
    action: string;
    actor_type: string;
    actor_id: string;
    client_ip: string | null;
    user_agent: string | null;
    request_id: string | null;
    details: Record<string, unknown>;
  }>(
    `SELECT action, actor_type, actor_id, host(client_ip) AS client_ip, user_agent, request_id, details
     FROM token_audit_events WHERE token_id = $1 AND action LIKE 'token.%leak%' ORDER BY sequence`,
    [tokenId],
  );
  return rows;
}
