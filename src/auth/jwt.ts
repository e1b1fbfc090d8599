// Employee JWTs: verification with one pinned algorithm (so `alg: none` and HS/RS confusion are
// refused by construction), and minting of dev/demo tokens for the CLI, the seed and the tests.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { jwtPublicKey, type JwtConfig } from '../config.js';

export interface JwtVerifier {
  /** Resolves to the verified payload; rejects on any signature, algorithm or claim problem. */
  verify(token: string, now: Date): Promise<JWTPayload & { sub: string }>;
}

export interface JwtVerifierOptions {
  jwt: JwtConfig;
  issuer: string | null;
  audience: string | null;
}

function keyAndAlgorithm(jwt: JwtConfig): { key: KeyObject; algorithm: string } {
  if (jwt.kind === 'secret') {
    return { key: createSecretKey(Buffer.from(jwt.secret, 'utf8')), algorithm: 'HS256' };
  }
  // the same check as at config load (RSA >= 2048 bits or P-256; a ConfigError otherwise), for a
  // JwtConfig built by hand
  const { key, algorithm } = jwtPublicKey(jwt.pem);
  return { key, algorithm };
}

export function createJwtVerifier(options: JwtVerifierOptions): JwtVerifier {
  const { key, algorithm } = keyAndAlgorithm(options.jwt);
  return {
    async verify(token, now) {
      const { payload } = await jwtVerify(token, key, {
        algorithms: [algorithm],
        issuer: options.issuer ?? undefined,
        audience: options.audience ?? undefined,
        requiredClaims: ['exp', 'sub'],
        currentDate: now,
        clockTolerance: 5,
      });
      return payload as JWTPayload & { sub: string };
    },
  };
}

export interface MintOptions {
  secret: string;
  userId: number;
  issuer?: string | null;
  audience?: string | null;
  ttlSeconds?: number;
  now?: Date;
}

/** HS256 token for a user id; production employee JWTs come from the platform's sign-in. */
export async function mintEmployeeJwt(options: MintOptions): Promise<string> {
  const issuedAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  let jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(String(options.userId))
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + (options.ttlSeconds ?? 12 * 3600));
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return jwt.sign(Buffer.from(options.secret, 'utf8'));
}
