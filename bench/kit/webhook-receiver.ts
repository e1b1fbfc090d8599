// P17's loopback webhook receiver: each delivery's arrival, webhook-id and type, its signature
// verified with standardwebhooks (a bad one is answered 400 and counted, never recorded). Arrival is
// node:http's 'request': on loopback the headers come in the first byte's segment, plus one parse.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedDelivery {
  webhookId: string;
  type: string;
  /** when its first byte arrived: epoch milliseconds with a microsecond fraction */
  firstByteAt: number;
  /** the body's `data` */
  data: unknown;
}

export interface WebhookReceiver {
  url: string;
  /** the endpoint's signing secret (whsec_...), known once the endpoint is registered */
  secret: string | null;
  /** verified deliveries, in the order they arrived */
  readonly deliveries: ReceivedDelivery[];
  /** deliveries refused for their signature (or their body) */
  readonly badlySigned: number;
  close(): Promise<void>;
}

/** Now as epoch milliseconds, to the microsecond (Date.now() has whole milliseconds only). */
export const epochMs = () => performance.timeOrigin + performance.now();

const header = (request: IncomingMessage, name: string) => {
  const value = request.headers[name];
  return typeof value === 'string' ? value : '';
};

export async function startWebhookReceiver(options: { path?: string } = {}): Promise<WebhookReceiver> {
  const path = options.path ?? '/webhooks';
  const deliveries: ReceivedDelivery[] = [];
  let badlySigned = 0;
  const refuse = (response: ServerResponse, status: number, message: string) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: message }));
  };

  const server = createServer((request, response) => {
    const firstByteAt = epochMs();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== path) return refuse(response, 404, 'not a webhook path');
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': header(request, 'webhook-id'),
        'webhook-timestamp': header(request, 'webhook-timestamp'),
        'webhook-signature': header(request, 'webhook-signature'),
      };
      let payload: { type?: unknown; data?: unknown };
      try {
        if (!receiver.secret) throw new Error('no secret yet');
        payload = new Webhook(receiver.secret).verify(body, headers) as typeof payload;
      } catch {
        badlySigned++;
        return refuse(response, 400, 'bad signature');
      }
      deliveries.push({ webhookId: headers['webhook-id'], type: String(payload.type), firstByteAt, data: payload.data });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}${path}`,
    secret: null,
    deliveries,
    get badlySigned() {
      return badlySigned;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
