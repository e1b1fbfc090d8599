// Checks of single configuration values, each as the code that will use it reads it: connection
// URLs as node-postgres and ioredis parse them, host names, proxy lists, paths, JWT issuers and
// public keys. src/config.ts (with the parts in src/config/) turns their findings into one `Invalid configuration:` line.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { statSync } from 'node:fs';
import { isIP } from 'node:net';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
  }
}

/** What is at a path, without throwing (EACCES, ENOTDIR, ELOOP: 'unreadable'). */
export function pathKind(path: string): 'missing' | 'file' | 'directory' | 'other' | 'unreadable' {
  try {
    const stat = statSync(path);
    return stat.isFile() ? 'file' : stat.isDirectory() ? 'directory' : 'other';
  } catch (error) {
    // ENOENT only: on Node 24 (not 20) throwIfNoEntry: false also hid ENOTDIR, a file on the path
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
}

/**
 * The base URL partners reach the API at (the OpenAPI document's `servers` entry), normalised, or
 * null when it is none: an absolute http(s) URL without credentials, query or fragment, or a path
 * on the document's own origin ("/", "/coldtrack"). Without a trailing slash but for "/" itself:
 * the document's paths begin with one.
 */
export function publicBaseUrl(value: string): string | null {
  const relative = value.startsWith('/') && !value.startsWith('//');
  if (/[?#\\\s]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, relative ? 'http://relative.invalid' : undefined);
  } catch {
    return null;
  }
  if (!relative && (!/^https?:$/.test(url.protocol) || url.username || url.password)) return null;
  const path = url.pathname.replace(/\/+$/, '');
  return relative ? path || '/' : `${url.origin}${path}`;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const proxyEntry = (entry: string) => {
  const [address, bits, ...rest] = entry.split('/');
  if (rest.length > 0 || !address || isIP(address) === 0) return false;
  if (bits === undefined) return true;
  const max = isIP(address) === 4 ? 32 : 128;
  // a /0 would trust every address (and Fastify's proxy-addr refuses it at start-up)
  return /^\d+$/.test(bits) && Number(bits) >= 1 && Number(bits) <= max;
};

/**
 * Why a connection URL would not parse in its client, or null. Both clients use WHATWG URL and
 * percent-decode the user name and password; node-postgres first escapes spaces and a "%" that
 * starts no escape (pg-connection-string), ioredis does not.
 */
export function connectionUrlProblem(value: string, client: 'pg' | 'ioredis'): string | null {
  const text = client === 'pg' && / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(value) ? encodeURI(value).replace(/%25(\d\d)/g, '%$1') : value;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a valid URL (percent-encode special characters in the user name and password)';
  }
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    return 'has a malformed percent-escape in its user name or password (write a literal "%" as %25)';
  }
  if (client === 'pg') {
    // node-postgres reads these files when it connects: a missing one would fail every connection
    for (const parameter of ['sslcert', 'sslkey', 'sslrootcert']) {
      const file = url.searchParams.get(parameter);
      if (file && pathKind(file) !== 'file') return `has ${parameter}=${file}, which is not a file`;
    }
  }
  return null;
}

// labels of letters, digits, "-" and "_" (container and compose service names have underscores)
export const HOST_NAME = /^(?=.{1,253}$)[a-z\d_](?:[a-z\d_-]{0,61}[a-z\d_])?(?:\.[a-z\d_](?:[a-z\d_-]{0,61}[a-z\d_])?)*\.?$/i;

/** JWT "iss"/"aud" values are StringOrURI (RFC 7519 2): any text, but a URI if it has a ":". */
export const stringOrUri = (value: string) => {
  if (/[\u0000-\u001f\u007f]/.test(value) || value.length > 1024) return false;
  if (!value.includes(':')) return true;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
};

const PUBLIC_KEY_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g;
const SUPPORTED_KEYS = 'RSA of 2048 bits or more (RS256) or EC P-256 (ES256)';

/**
 * The verification key and its one algorithm from a JWT_PUBLIC_KEY value. Throws a ConfigError
 * (never a crypto stack trace, never any of the key material) for anything else: a private key
 * pasted by mistake, text that is not a PEM SPKI public key, or a key type the service does not
 * verify with (P-384, Ed25519, RSA-PSS, RSA under 2048 bits).
 */
export function jwtPublicKey(pem: string): { key: KeyObject; algorithm: 'RS256' | 'ES256'; pem: string } {
  const problem = (text: string) => new ConfigError('JWT_PUBLIC_KEY', text);
  if (/PRIVATE KEY-----/.test(pem)) {
    throw problem(
      'holds a private key: a public key is expected ("-----BEGIN PUBLIC KEY-----"); keep the private key with the token issuer',
    );
  }
  const blocks = pem.match(PUBLIC_KEY_BLOCK) ?? [];
  if (blocks.length !== 1) {
    throw problem(
      blocks.length === 0
        ? 'must be a PEM "PUBLIC KEY" (SPKI): "-----BEGIN PUBLIC KEY-----" ... "-----END PUBLIC KEY-----"'
        : `must hold one PEM "PUBLIC KEY", not ${blocks.length}`,
    );
  }
  const block = blocks[0]!;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: block, format: 'pem' });
  } catch {
    throw problem('is not a readable PEM public key (its base64 body does not parse as SPKI)');
  }
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (type === 'rsa') {
    const bits = details.modulusLength ?? 0;
    if (bits < 2048) throw problem(`is a ${bits}-bit RSA key: expected ${SUPPORTED_KEYS}`);
    return { key, algorithm: 'RS256', pem: block };
  }
  if (type === 'ec') {
    if (details.namedCurve === 'prime256v1') return { key, algorithm: 'ES256', pem: block };
    throw problem(`is an EC key on curve ${details.namedCurve ?? 'unknown'}: expected ${SUPPORTED_KEYS}`);
  }
  throw problem(`is an ${type ?? 'unknown'} key: expected ${SUPPORTED_KEYS}`);
}
