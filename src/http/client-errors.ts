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

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  // a reset connection has nobody left to answer
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = REFUSALS[error.code ?? ''] ?? MALFORMED;
  const body = JSON.stringify({ error: { code: 'invalid_request', message } });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}
