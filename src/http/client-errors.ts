// Requests Node's HTTP parser refuses before Fastify sees them (headers or URL over the size
// limit, a malformed request line or header, a request that took too long to arrive) still get the
// service's one error body, not Fastify's default {"error","message","statusCode"}.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';

const REFUSALS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request headers (or the URL) are too large' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time' },
};
const MALFORMED = { status: 400, message: 'The request is not well-formed HTTP' };
/** How long the rest of a refused request is read and dropped, at most, before the socket goes. */
const LINGER_MS = 2000;

/** Sockets already answered: the parser reports its error again as the rest of the request comes. */
const answered = new WeakSet<Socket>();

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  // a reset connection has nobody left to answer
  if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  const { status, message } = REFUSALS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ error: { code: 'invalid_request', message } });
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // The answer, then a graceful close: the rest of the refused request (a 100 KB header) is read
  // and dropped until the client closes too. Destroyed with it unread, the kernel resets the
  // connection and the client may never read the answer (the parser refuses after the first
  // 64 KB): on Node 24, test/http/client-errors.test.ts's client got ECONNRESET instead of the
  // 431 every time (on Node 20 the answer happened to arrive first).
  socket.removeAllListeners('data'); // the HTTP parser's: it has nothing more to say
  socket.on('data', () => {});
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(linger));
}
