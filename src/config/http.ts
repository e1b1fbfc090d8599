// How the service listens and speaks HTTP: address and port, the proxies whose X-Forwarded-For
// is honoured, the base URL partners reach it at, and the log level.
import { isIP } from 'node:net';
import { z } from 'zod';
import { HOST_NAME, LOG_LEVELS, proxyEntry, publicBaseUrl } from './checks.js';
import { integerText, optionalText } from './env.js';

export const httpVariables = {
  HOST: optionalText.pipe(
    z
      .string()
      .refine(
        (host) => isIP(host) !== 0 || HOST_NAME.test(host),
        'must be an IP address or a host name (e.g. 0.0.0.0, ::, localhost), without brackets or port',
      )
      .optional(),
  ),
  PORT: optionalText.pipe(integerText(0, 65535).optional()),
  TRUST_PROXY: optionalText.pipe(
    z
      .string()
      .transform((list) =>
        list
          .split(',')
          .map((entry) => entry.trim())
          .filter(Boolean),
      )
      .pipe(
        z
          .array(z.string().refine(proxyEntry, 'must be a comma-separated list of IPs or CIDRs (prefix length 1 or more)'))
          .min(1, 'must be a comma-separated list of IPs or CIDRs'),
      )
      .optional(),
  ),
  PUBLIC_BASE_URL: optionalText.pipe(
    z
      .string()
      .transform((value, ctx) => {
        const normalised = publicBaseUrl(value);
        if (normalised === null) {
          ctx.addIssue({
            code: 'custom',
            message:
              'must be an http:// or https:// URL without credentials, query or fragment, or a path starting with / (e.g. https://api.coldtrack.example)',
          });
          return z.NEVER;
        }
        return normalised;
      })
      .optional(),
  ),
  LOG_LEVEL: optionalText.pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).optional()),
};

export interface HttpConfig {
  host: string;
  port: number;
  trustProxy: string[];
  /** where partners reach the API: the OpenAPI document's `servers` entry ("/": its own origin) */
  publicBaseUrl: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

/** `embedded`: no DATABASE_URL, so the service listens on loopback only by default. */
export const httpConfigOf = (e: z.infer<z.ZodObject<typeof httpVariables>>, embedded: boolean): HttpConfig => ({
  host: e.HOST ?? (embedded ? '127.0.0.1' : '0.0.0.0'),
  port: e.PORT ?? 3000,
  trustProxy: e.TRUST_PROXY ?? [],
  publicBaseUrl: e.PUBLIC_BASE_URL ?? '/',
  logLevel: e.LOG_LEVEL ?? 'info',
});
