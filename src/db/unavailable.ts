// Whether a database error means "the database cannot answer now" (refused, unreachable, hung,
// restarting, closed to connections, out of connections) rather than a fault of the request or
// of the code: the HTTP layer answers those with 503 + Retry-After, and start-up retries them.
import { QUERY_DEADLINE_MESSAGE } from './pool.js';

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  // a deadline passed (src/db/pool.ts): the client's query_timeout, or the server's
  // statement_timeout (57014) on a server too slow to answer in time
  if (code === '57014' || message === QUERY_DEADLINE_MESSAGE) return true;
  // 55000 on connect: the database is closed to connections (ALLOW_CONNECTIONS false, maintenance)
  return (
    typeof message === 'string' &&
    /timeout exceeded when trying to connect|Connection terminated|is not currently accepting connections|the database system is (starting up|shutting down)/i.test(
      message,
    )
  );
}
