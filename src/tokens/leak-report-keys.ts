// The keys leak reports are signed with (LEAK_REPORT_PUBLIC_KEYS) and the check of a report's
// signature: GitHub's secret scanning partner protocol signs the raw request body with ECDSA P-256
// over SHA-256 (DER, base64) and names the key in Github-Public-Key-Identifier. The setting holds
// what GitHub's key endpoint serves (https://api.github.com/meta/public_keys/secret_scanning): its
// `public_keys` array, or the whole answer; fields besides key_identifier and key are ignored.
import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { ConfigError } from '../config/checks.js';

export interface LeakReportKey {
  keyIdentifier: string;
  key: KeyObject;
}

const VARIABLE = 'LEAK_REPORT_PUBLIC_KEYS';
const SHAPE = 'a JSON array of {"key_identifier", "key"} objects (the public_keys GitHub serves for secret scanning)';
const PUBLIC_KEY_BLOCK = /^\s*-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----\s*$/;
/** GitHub's identifiers are 64 hex digits; this leaves room for another signer's, within the audit's actor limits. */
const KEY_IDENTIFIER = /^[\x21-\x7e]{1,128}$/;

/** The setting's keys; a ConfigError naming the entry at fault, never echoing key material. */
export function leakReportKeys(text: string): LeakReportKey[] {
  const problem = (message: string) => new ConfigError(VARIABLE, message);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw problem(`is not valid JSON: expected ${SHAPE}`);
  }
  // the key endpoint's whole answer is accepted as well as its array
  const list =
    parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as { public_keys?: unknown }).public_keys : parsed;
  if (!Array.isArray(list)) throw problem(`must be ${SHAPE}`);
  if (list.length === 0) throw problem('holds no key: leave it unset to turn leak reports off');
  const keys: LeakReportKey[] = [];
  for (const [index, entry] of list.entries()) {
    const where = `entry ${index}`;
    const { key_identifier: keyIdentifier, key: pem } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown };
    if (typeof keyIdentifier !== 'string' || !KEY_IDENTIFIER.test(keyIdentifier)) {
      throw problem(`${where}: key_identifier must be 1..128 printable characters without spaces`);
    }
    if (keys.some((known) => known.keyIdentifier === keyIdentifier)) throw problem(`${where}: key_identifier is given twice`);
    if (typeof pem !== 'string') throw problem(`${where}: key must be a PEM public key (a string)`);
    if (/PRIVATE KEY-----/.test(pem)) throw problem(`${where}: key holds a private key: the signer's public key is expected`);
    if (!PUBLIC_KEY_BLOCK.test(pem) || pem.split('-----BEGIN').length !== 2) {
      throw problem(`${where}: key must be one PEM "PUBLIC KEY": "-----BEGIN PUBLIC KEY-----" ... "-----END PUBLIC KEY-----"`);
    }
    let key: KeyObject;
    try {
      key = createPublicKey({ key: pem, format: 'pem' });
    } catch {
      throw problem(`${where}: key is not a readable PEM public key (its base64 body does not parse as SPKI)`);
    }
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (key.asymmetricKeyType !== 'ec' || curve !== 'prime256v1') {
      const found =
        key.asymmetricKeyType === 'ec' ? `an EC key on curve ${curve ?? 'unknown'}` : `an ${key.asymmetricKeyType ?? 'unknown'} key`;
      throw problem(`${where}: key is ${found}: expected EC P-256 (ECDSA-NIST-P256V1-SHA256)`);
    }
    keys.push({ keyIdentifier, key });
  }
  return keys;
}

/** A DER ECDSA P-256 signature is at most 72 bytes: 96 base64 characters. */
const SIGNATURE = /^[A-Za-z0-9+/]{1,200}={0,2}$/;

/**
 * The identifier of the configured key whose signature over `body` the headers carry, or null:
 * no or unknown key identifier, no signature, or one that does not verify.
 */
export function verifiedSigner(
  keys: readonly LeakReportKey[],
  keyIdentifier: string | string[] | undefined,
  signature: string | string[] | undefined,
  body: Buffer,
): string | null {
  if (typeof keyIdentifier !== 'string' || typeof signature !== 'string' || !SIGNATURE.test(signature)) return null;
  const signer = keys.find((candidate) => candidate.keyIdentifier === keyIdentifier);
  if (!signer) return null;
  try {
    return verify('sha256', body, { key: signer.key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64')) ? signer.keyIdentifier : null;
  } catch {
    // a signature that is not DER at all
    return null;
  }
}
