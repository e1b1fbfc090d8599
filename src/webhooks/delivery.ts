// One attempt at delivering an event: a signed POST to the endpoint's URL, sent to an address
// checked just before (address-policy.ts), within a deadline, redirects not followed. What the
// endpoint answered is read only up to a few KB and never kept: the log holds the status code.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { type AllowedNetworks, checkUrlShape, RefusedUrl, resolveChecked } from './address-policy.js';
import { signedHeaders } from './signing.js';

/** The largest payload sent; an event's data is built well under it (a token's fields, a cursor). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;
/** What is read of an answer before the connection is dropped. */
const ANSWER_BYTES_READ = 4 * 1024;
const USER_AGENT = 'coldtrack-webhooks/1';

export interface Message {
  messageId: string;
  type: string;
  occurredAt: Date;
  data: unknown;
}

export interface AttemptOutcome {
  ok: boolean;
  statusCode: number | null;
  /** why it failed, in a few words (never the answer's body) */
  error: string | null;
  retryAfter: string | undefined;
  durationMs: number;
}

/** The Standard Webhooks body: type, timestamp and data. */
export function payloadOf(message: Message): string {
  return JSON.stringify({ type: message.type, timestamp: message.occurredAt.toISOString(), data: message.data });
}

export interface AttemptOptions {
  url: string;
  /** secrets signing it: the current one first, then one in its grace period */
  secrets: string[];
  message: Message;
  timeoutMs: number;
  allowedNetworks: AllowedNetworks;
  now: Date;
}

class LookupTimeout extends Error {}

/** Sends one attempt within options.timeoutMs, the DNS lookup included; never throws: a failure is an outcome. */
export async function attemptDelivery(options: AttemptOptions): Promise<AttemptOutcome> {
  const started = performance.now();
  const failed = (error: string, statusCode: number | null = null, retryAfter?: string): AttemptOutcome => ({
    ok: false,
    statusCode,
    error: error.slice(0, 300),
    retryAfter,
    durationMs: Math.round(performance.now() - started),
  });
  const body = payloadOf(options.message);
  if (Buffer.byteLength(body) > MAX_PAYLOAD_BYTES) return failed(`payload over ${MAX_PAYLOAD_BYTES} bytes`);
  let url: URL;
  let addresses: Array<{ address: string; family: number }>;
  // the deadline covers the lookup too: a slow resolver must not stretch an attempt past its lease
  let lookupTimer: NodeJS.Timeout | undefined;
  try {
    url = checkUrlShape(options.url);
    const timedOut = new Promise<never>((_, reject) => {
      lookupTimer = setTimeout(() => reject(new LookupTimeout()), options.timeoutMs);
    });
    addresses = await Promise.race([resolveChecked(url, options.allowedNetworks), timedOut]);
  } catch (error) {
    if (error instanceof RefusedUrl) return failed(`refused: ${error.message}`);
    if (error instanceof LookupTimeout) return failed(`no answer within ${options.timeoutMs} ms (DNS lookup)`);
    throw error;
  } finally {
    clearTimeout(lookupTimer);
  }
  const remainingMs = Math.max(1, options.timeoutMs - Math.round(performance.now() - started));
  // the connection goes to the first address checked above, whatever the name resolves to now
  const [first] = addresses;
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) (callback as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [first!]);
    else callback(null, first!.address, first!.family);
  };
  const headers = {
    ...signedHeaders(options.secrets, options.message.messageId, options.now, body),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': USER_AGENT,
  };
  return new Promise<AttemptOutcome>((resolve) => {
    let settled = false;
    const settle = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      resolve(outcome);
    };
    const transport = url.protocol === 'https:' ? https : http;
    const request = transport.request(url, { method: 'POST', headers, lookup: pinned, agent: false }, (answer) => {
      const statusCode = answer.statusCode ?? 0;
      let read = 0;
      answer.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read >= ANSWER_BYTES_READ) finish();
      });
      answer.on('end', () => finish());
      answer.on('error', () => finish());
      const finish = () => {
        const durationMs = Math.round(performance.now() - started);
        if (statusCode >= 200 && statusCode < 300) settle({ ok: true, statusCode, error: null, retryAfter: undefined, durationMs });
        else if (statusCode >= 300 && statusCode < 400) settle(failed(`answered ${statusCode}: redirects are not followed`, statusCode));
        else settle(failed(`answered ${statusCode}`, statusCode, answer.headers['retry-after']));
      };
    });
    const deadline = setTimeout(() => settle(failed(`no answer within ${options.timeoutMs} ms`)), remainingMs);
    request.on('error', (error: NodeJS.ErrnoException) => settle(failed(error.code ?? error.message)));
    request.end(body);
  });
}
