// pino options for the service: JSON logs with the request id, and no secret ever written.
// Authorization headers are redacted by path; anything token- or JWT-shaped in a URL (a token
// sent in the query string, say) is masked by the request serializer.
import type { FastifyRequest } from 'fastify';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { TOKEN_LIKE } from './tokens/format.js';

const JWT_LIKE = /eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*/g;
const SECRET_QUERY = /([?&](?:token|api_token|access_token|apikey|api_key)=)[^&]*/gi;

export function redactSecrets(text: string): string {
  return text.replace(SECRET_QUERY, '$1[REDACTED]').replace(TOKEN_LIKE, 'ctk_[REDACTED]').replace(JWT_LIKE, '[REDACTED_JWT]');
}

type LogFields = Record<string, string>;
/** With tracing on, the current request's trace fields (src/tracing/requests.ts); null otherwise. */
let traceFields: (() => LogFields | null) | null = null;

/**
 * Tracing installs this so that every line logged inside a request names its trace: read per
 * line written rather than bound per request (a child logger a request cost more than the rest
 * of tracing an unsampled request together; bench P19).
 */
export function installTraceFields(fields: (() => LogFields | null) | null) {
  traceFields = fields;
}

export function loggerOptions(level: LoggerOptions['level']): LoggerOptions {
  return {
    level,
    mixin: () => traceFields?.() ?? {},
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'request.headers.authorization',
        'token',
        '*.token',
      ],
      censor: '[REDACTED]',
    },
    serializers: {
      // pino's own, less pg-pool's `client`: it hangs the whole pg client on an idle client's
      // error (connection settings, every prepared statement's SQL), kilobytes a line per
      // connection when PostgreSQL restarts
      err(error: Error) {
        const { client: _client, ...serialized } = pino.stdSerializers.err(error) as ReturnType<typeof pino.stdSerializers.err> & {
          client?: unknown;
        };
        return serialized;
      },
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactSecrets(request.url),
          remoteAddress: request.ip,
        };
      },
    },
  };
}

/**
 * The cluster primary's logger: the workers' options (time, pid, hostname, the redaction), its
 * lines marked `role: "primary"`, on stderr, where its start-up lines go. Written synchronously:
 * the crash-loop line is the last thing the primary does before it exits.
 */
export function primaryLogger(level: LoggerOptions['level']): Logger {
  return pino(loggerOptions(level), pino.destination({ dest: 2, sync: true })).child({ role: 'primary' });
}
