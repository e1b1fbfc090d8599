// P17's measurement beside scenario webhook-revoke-beside-mixed: an api_token.revoked endpoint
// registered through the API at a loopback receiver, tokens revoked at a steady rate, each revoke
// matched with its delivery. The commit is not observable (track_commit_timestamp is off), so each
// latency is kept from the request sent (an upper bound, what P17 judges) and from its answer.
import * as hdr from 'hdr-histogram-js';
import { LATENCY_US } from './histograms.js';
import type { BenchToken, Employee } from './credentials.js';
import { epochMs, startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export interface WebhookRevokePlan {
  /** revokes a second */
  rate: number;
  /** tokens to revoke, in order, all of the employees' company */
  tokens: BenchToken[];
  /** Registered Employees of that company, taking turns (each under its write limit); the first registers the endpoint */
  employees: Employee[];
}

export interface WebhookFigures {
  /** revokes answered 200 */
  revokes: number;
  /** revokes answered otherwise, or failed: the first few, with their status */
  revokeFailures: string[];
  /** verified deliveries received (duplicates included) */
  deliveries: number;
  /** answered revokes with no delivery by the end of the wait */
  missing: number;
  /** deliveries of a revoke already delivered (the same token or webhook-id again) */
  duplicates: number;
  /** deliveries refused by the receiver's signature check */
  badlySigned: number;
  /** verified deliveries of no revoke of this run (another type, or an unknown token) */
  unexpected: number;
  /** µs from each revoke's request sent to its delivery's first byte (HdrHistogram, compressed base64) */
  fromSentHistogram: string;
  /** µs from each revoke's answer to its delivery's first byte */
  fromAnswerHistogram: string;
}

export interface WebhookRevokes {
  /** stops revoking, waits for the last deliveries (at most DELIVERY_WAIT_MS), removes the endpoint and reports */
  stop(): Promise<WebhookFigures>;
}

/** The longest the kit waits, after the last revoke, for deliveries still due (a missed one is counted). */
const DELIVERY_WAIT_MS = 5000;

const bearer = (employee: Employee) => ({ authorization: `Bearer ${employee.jwt}` });

async function registerEndpoint(url: string, employee: Employee, receiver: WebhookReceiver): Promise<string> {
  const response = await fetch(`${url}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { ...bearer(employee), 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url, event_types: ['api_token.revoked'], description: 'bench P17 receiver' }),
  });
  const body = (await response.json()) as { id?: string; secret?: string };
  if (response.status !== 201 || !body.id || !body.secret) {
    throw new Error(`registering the webhook endpoint answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  }
  receiver.secret = body.secret;
  return body.id;
}

interface Revoke {
  tokenId: string;
  sentAt: number;
  answeredAt: number;
}

/** Registers the endpoint and starts revoking; throws when the endpoint cannot be registered. */
export async function startWebhookRevokes(url: string, plan: WebhookRevokePlan): Promise<WebhookRevokes> {
  const receiver = await startWebhookReceiver();
  const [registrar] = plan.employees;
  if (!registrar || plan.tokens.length === 0) throw new Error('no employee or no token to revoke planned');
  let endpointId: string;
  try {
    endpointId = await registerEndpoint(url, registrar, receiver);
  } catch (error) {
    await receiver.close();
    throw error;
  }

  const revoked: Revoke[] = [];
  const failures: string[] = [];
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  const revoke = async (token: BenchToken, employee: Employee) => {
    const sentAt = epochMs();
    try {
      const response = await fetch(`${url}/api/v1/api-tokens/${token.id}/revoke`, { method: 'POST', headers: bearer(employee) });
      await response.arrayBuffer();
      if (response.status === 200) revoked.push({ tokenId: token.id, sentAt, answeredAt: epochMs() });
      else if (++failed <= 5) failures.push(`${response.status}`);
    } catch (error) {
      if (++failed <= 5) failures.push((error as Error).message);
    }
  };
  // a fixed schedule (not one revoke after another's answer): a slow answer does not slow the rate
  const started = performance.now();
  let sent = 0;
  let timer: NodeJS.Timeout | null = null;
  const tick = () => {
    while (sent < plan.tokens.length && performance.now() - started >= (sent * 1000) / plan.rate) {
      const job = revoke(plan.tokens[sent]!, plan.employees[sent % plan.employees.length]!);
      inFlight.add(job);
      void job.finally(() => inFlight.delete(job));
      sent++;
    }
    timer = sent < plan.tokens.length ? setTimeout(tick, Math.max(1, started + (sent * 1000) / plan.rate - performance.now())) : null;
  };
  tick();

  return {
    async stop() {
      if (timer) clearTimeout(timer);
      await Promise.all(inFlight);
      const ids = new Set(revoked.map((r) => r.tokenId));
      const deliveredIds = () => new Set(receiver.deliveries.map((d) => tokenIdOf(d.data)).filter((id) => ids.has(id!)));
      const waitUntil = performance.now() + DELIVERY_WAIT_MS;
      while (deliveredIds().size < ids.size && performance.now() < waitUntil) await new Promise((r) => setTimeout(r, 50));
      const figures = tally(revoked, receiver, failures, failed);
      await fetch(`${url}/api/v1/webhook-endpoints/${endpointId}`, { method: 'DELETE', headers: bearer(registrar) })
        .then((response) => response.arrayBuffer())
        .catch(() => undefined); // left behind, it only receives this company's later revokes
      await receiver.close();
      return figures;
    },
  };
}

function tokenIdOf(data: unknown): string | null {
  const id = (data as { api_token?: { id?: unknown } } | null)?.api_token?.id;
  return typeof id === 'string' ? id.toLowerCase() : null;
}

function tally(revoked: Revoke[], receiver: WebhookReceiver, revokeFailures: string[], failed: number): WebhookFigures {
  const byToken = new Map(revoked.map((r) => [r.tokenId.toLowerCase(), r]));
  const fromSent = hdr.build(LATENCY_US);
  const fromAnswer = hdr.build(LATENCY_US);
  const seenTokens = new Set<string>();
  const seenIds = new Set<string>();
  let duplicates = 0;
  let unexpected = 0;
  for (const delivery of receiver.deliveries) {
    const tokenId = tokenIdOf(delivery.data);
    const revoke = tokenId ? byToken.get(tokenId) : undefined;
    if (delivery.type !== 'api_token.revoked' || !revoke) {
      unexpected++;
      continue;
    }
    if (seenTokens.has(tokenId!) || seenIds.has(delivery.webhookId)) {
      duplicates++;
      continue;
    }
    seenTokens.add(tokenId!);
    seenIds.add(delivery.webhookId);
    // at least 1 µs: a histogram cannot hold 0 or less (an answer later than the delivery is possible)
    fromSent.recordValue(Math.max(1, Math.round((delivery.firstByteAt - revoke.sentAt) * 1000)));
    fromAnswer.recordValue(Math.max(1, Math.round((delivery.firstByteAt - revoke.answeredAt) * 1000)));
  }
  const figures: WebhookFigures = {
    revokes: revoked.length,
    revokeFailures: failed > revokeFailures.length ? [...revokeFailures, `and ${failed - revokeFailures.length} more`] : revokeFailures,
    deliveries: receiver.deliveries.length,
    missing: revoked.length - seenTokens.size,
    duplicates,
    badlySigned: receiver.badlySigned,
    unexpected,
    fromSentHistogram: hdr.encodeIntoCompressedBase64(fromSent),
    fromAnswerHistogram: hdr.encodeIntoCompressedBase64(fromAnswer),
  };
  fromSent.destroy();
  fromAnswer.destroy();
  return figures;
}
