// Requests Node's HTTP parser refuses (before Fastify routes them) are answered over a real socket
// in the service's one error shape, and the connection is closed.
import net from 'node:net';
import t from 'tap';
import { createTestApp } from '../helpers/app.js';

const ctx = await createTestApp(t);
await ctx.app.listen({ port: 0, host: '127.0.0.1' });
const { port } = ctx.app.server.address() as net.AddressInfo;

/** Writes raw bytes and reads everything until the server closes the connection. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
  });
}

const cases: Array<[string, string, number]> = [
  ['a URL beyond the header size limit', `GET /api/v1/analytics/users?period=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431],
  ['a header beyond the size limit', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(100_000)}\r\n\r\n`, 431],
  ['a header line without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n', 400],
  ['a Content-Length that is not a number', 'POST /api/v1/api-tokens HTTP/1.1\r\nHost: x\r\nContent-Length: ten\r\n\r\n', 400],
  ['not HTTP at all', 'HELLO THERE\r\n\r\n', 400],
];

for (const [label, request, status] of cases) {
  t.test(label, async (t) => {
    const answer = await raw(request);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    t.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), `status ${status}`);
    t.match(head, /content-type: application\/json/i);
    t.match(head, /connection: close/i);
    const parsed = JSON.parse(body) as { error: { code: string; message: string } };
    t.equal(parsed.error.code, 'invalid_request', "the service's error shape");
    t.type(parsed.error.message, 'string');
    t.same(Object.keys(parsed), ['error'], 'nothing else (no statusCode, no stack)');
  });
}

t.test('the server still answers afterwards', async (t) => {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  t.equal(response.status, 200);
});
