// A webhook receiver on a loopback port for the tests: it keeps every request (headers and the
// raw body) and answers what the test tells it to (200 by default; a status, a status with
// headers, a status after a delay, or no answer at all).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  at: number;
  /** the sender's port: which process sent it, for a test that has several (test/webhooks/crash.test.ts) */
  remotePort: number;
}

/** delayMs: the answer comes that long after the request (an attempt under way meanwhile) */
export type Answer = number | { status: number; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** what the next requests get: a function of the request's number (from 1) */
  answer: (n: number, request: Received) => Answer;
  /** waits until `count` requests arrived (or fails after `ms`) */
  waitFor(count: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(t: { teardown(fn: () => unknown): void }, path = '/hooks'): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    answer: () => 200,
    async waitFor(count, ms = 10_000) {
      const until = Date.now() + ms;
      while (receiver.received.length < count) {
        if (Date.now() > until) throw new Error(`the receiver got ${receiver.received.length} of ${count} deliveries within ${ms} ms`);
        await sleep(20);
      }
      return receiver.received.slice(0, count);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const received: Received = {
        headers: request.headers,
        body,
        json: JSON.parse(body),
        at: Date.now(),
        remotePort: request.socket.remotePort ?? 0,
      };
      receiver.received.push(received);
      const answer = receiver.answer(receiver.received.length, received);
      if (answer === 'hang') {
        hanging.add(response);
        return;
      }
      const { status, headers = {}, delayMs = 0 } = typeof answer === 'number' ? { status: answer } : answer;
      if (delayMs === 0) {
        response.writeHead(status, headers).end('ok');
        return;
      }
      hanging.add(response);
      setTimeout(() => {
        hanging.delete(response);
        if (!response.destroyed) response.writeHead(status, headers).end('ok');
      }, delayMs).unref();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  t.teardown(async () => {
    for (const response of hanging) response.destroy();
    server.closeAllConnections();
    await receiver.close();
  });
  return receiver;
}
