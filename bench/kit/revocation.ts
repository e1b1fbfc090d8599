// P7: a revoked token is refused by every worker from the moment the revoke call returns. Each
// round hammers one fresh token from several keep-alive connections (spread over the workers by
// the cluster), revokes it through the management API mid-stream, and keeps hammering; every
// request's start time is recorded, and a 2xx to a request that STARTED after the revoke call
// returned is a violation. Requests are paced so the token's 100/min budget lasts past the revoke:
// the refusals after it must be 401 (revoked), not 429 (which would prove nothing).
import http from 'node:http';
import type { BenchToken, Employee } from './dataset.js';
import { request, sleep } from './processes.js';

export interface RevocationFigures {
  rounds: number;
  /** the P7 figure: 2xx answers to requests started after the revoke call returned */
  acceptedAfterRevoke: number;
  requestsAfterRevoke: number;
  /** by status; a 429 with its scope: `429 public_read` is a request refused as revoked (401) that
   * then counted against the client IP's limit for failed credentials (120/min) */
  statusesAfterRevoke: Record<string, number>;
  /** proof the token was live (and cached) on the workers before the revoke */
  acceptedBeforeRevoke: number;
  /** started while the revoke call was in flight: either answer is allowed */
  inFlightDuringRevoke: number;
  revokeMs: { p50: number; max: number };
  failures: string[];
}

interface Sample {
  startedAt: number;
  /** the status, and for a 429 the rate-limit scope that refused it */
  answer: string;
  accepted: boolean;
}

function answerOf(status: number, body: string): string {
  if (status !== 429) return String(status);
  try {
    return `429 ${(JSON.parse(body) as { error?: { details?: { scope?: string } } }).error?.details?.scope ?? ''}`.trim();
  } catch {
    return '429';
  }
}

const LANES = 8;
const GAP_MS = 4;
/** requests per round: the token's budget of 100 a minute, less a margin */
const CAP = 94;
const REVOKE_AFTER_ACCEPTED = 30;

async function round(url: string, token: BenchToken, unitId: number, revoker: Employee) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: LANES });
  const path = `${url}/api/v1/analytics/utilization?start_date=2025-06-01&end_date=2025-06-01&page_size=1&cooling_unit_id=${unitId}`;
  const headers = { authorization: `Bearer ${token.raw}` };
  const samples: Sample[] = [];
  let started = 0;
  let stopAt = Infinity;
  const deadline = performance.now() + 5000;

  const lane = async () => {
    while (started < CAP && performance.now() < Math.min(stopAt, deadline)) {
      started++;
      const startedAt = performance.now();
      const sample = await request(path, { headers, agent, timeoutMs: 5000 }).then(
        ({ status, body }) => ({ startedAt, answer: answerOf(status, body), accepted: status >= 200 && status < 300 }),
        (error: Error) => ({ startedAt, answer: `error ${error.message.slice(0, 40)}`, accepted: false }),
      );
      samples.push(sample);
      await sleep(GAP_MS);
    }
  };
  const lanes = Array.from({ length: LANES }, lane);

  while (samples.filter((s) => s.accepted).length < REVOKE_AFTER_ACCEPTED && performance.now() < deadline) await sleep(1);
  const revokeStartedAt = performance.now();
  const revoke = await request(`${url}/api/v1/api-tokens/${token.id}/revoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${revoker.jwt}`, 'content-type': 'application/json' },
    timeoutMs: 10_000,
  }).catch((error: Error) => ({ status: 0, body: error.message }));
  const returnedAt = performance.now();
  stopAt = returnedAt + 300;
  await Promise.all(lanes);
  agent.destroy();
  return { samples, revokeStartedAt, returnedAt, revokeStatus: revoke.status, revokeBody: revoke.body };
}

export async function measureRevocation(url: string, tokens: BenchToken[], unitId: number, revoker: Employee): Promise<RevocationFigures> {
  const figures: RevocationFigures = {
    rounds: tokens.length,
    acceptedAfterRevoke: 0,
    requestsAfterRevoke: 0,
    statusesAfterRevoke: {},
    acceptedBeforeRevoke: 0,
    inFlightDuringRevoke: 0,
    revokeMs: { p50: 0, max: 0 },
    failures: [],
  };
  const revokeTimes: number[] = [];
  for (const token of tokens) {
    const result = await round(url, token, unitId, revoker);
    if (result.revokeStatus !== 200) figures.failures.push(`revoke answered ${result.revokeStatus}: ${result.revokeBody.slice(0, 200)}`);
    revokeTimes.push(result.returnedAt - result.revokeStartedAt);
    for (const sample of result.samples) {
      if (sample.startedAt > result.returnedAt) {
        figures.requestsAfterRevoke++;
        figures.statusesAfterRevoke[sample.answer] = (figures.statusesAfterRevoke[sample.answer] ?? 0) + 1;
        if (sample.accepted) figures.acceptedAfterRevoke++;
      } else if (sample.startedAt >= result.revokeStartedAt) {
        figures.inFlightDuringRevoke++;
      } else if (sample.accepted) {
        figures.acceptedBeforeRevoke++;
      }
    }
  }
  revokeTimes.sort((a, b) => a - b);
  figures.revokeMs = { p50: revokeTimes[Math.floor(revokeTimes.length / 2)] ?? 0, max: revokeTimes.at(-1) ?? 0 };
  return figures;
}
