// The employees' JWTs: the key they are verified with (a secret or a public key) and the issuer
// and audience they must name.
import { z } from 'zod';
import { ConfigError, jwtPublicKey, stringOrUri } from './checks.js';
import { optionalText } from './env.js';

export type JwtConfig = { kind: 'secret'; secret: string } | { kind: 'public-key'; pem: string };

export const jwtVariables = {
  JWT_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters (256 bits for HS256)').optional()),
  // checked further by jwtPublicKey() below: the text is only the first gate
  JWT_PUBLIC_KEY: optionalText.pipe(
    z
      .string()
      .transform((pem) => pem.replace(/\\n/g, '\n'))
      .optional(),
  ),
  JWT_ISSUER: optionalText.pipe(
    z.string().refine(stringOrUri, 'must be the "iss" value: printable text, a URI if it has a ":" (at most 1024 characters)').optional(),
  ),
  JWT_AUDIENCE: optionalText.pipe(
    z.string().refine(stringOrUri, 'must be the "aud" value: printable text, a URI if it has a ":" (at most 1024 characters)').optional(),
  ),
};

export interface JwtSettings {
  /** null only in embedded mode, where start-up creates and keeps a secret in dataDir */
  jwt: JwtConfig | null;
  jwtIssuer: string | null;
  jwtAudience: string | null;
}

/** `embedded`: no DATABASE_URL, where start-up makes its own JWT secret; otherwise a key is required. */
export function jwtConfigOf(e: z.infer<z.ZodObject<typeof jwtVariables>>, embedded: boolean): JwtSettings {
  if (e.JWT_SECRET && e.JWT_PUBLIC_KEY) {
    throw new ConfigError('JWT_PUBLIC_KEY', 'cannot be combined with JWT_SECRET: set one of them');
  }
  const jwt: JwtConfig | null = e.JWT_SECRET
    ? { kind: 'secret', secret: e.JWT_SECRET }
    : e.JWT_PUBLIC_KEY
      ? { kind: 'public-key', pem: jwtPublicKey(e.JWT_PUBLIC_KEY).pem }
      : null;
  if (!embedded && !jwt) {
    throw new ConfigError('JWT_SECRET', 'is required (or JWT_PUBLIC_KEY) when DATABASE_URL is set');
  }
  return {
    jwt,
    jwtIssuer: e.JWT_ISSUER ?? null,
    jwtAudience: e.JWT_AUDIENCE ?? null,
  };
}
