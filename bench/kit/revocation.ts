// P7: a round hammers a fresh token from several connections, revokes it mid-stream and counts 2xx
// answers to requests started after the revoke returned, paced so the refusals are 401, not 429.
// Variants on clusters of their own: two-instances (one Redis, one database) and redis-restart
// (Redis started empty right after the revoke, or right before it, the revoke retried on 503).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { generateToken, hashToken } from '../../src/tokens/format.js';
import { type PrivateRedis, startPrivateRedis } from './private-redis.js';
import { sleep } from './processes.js';
import { WORKERS } from './config.js';
import { ALL_SCOPES, type BenchToken, type Employee } from './credentials.js';
import { request } from './load.js';
import { type Service, startProjectCluster } from './services.js';

export interface RevocationFigures {
  rounds: number;
  /** the P7 figure: 2xx answers to requests started after the revoke call returned */
  acceptedAfterRevoke: number;
  requestsAfterRevoke: number;
  /** by status; `429 public_read`: refused as revoked, then over the IP's failed-credentials limit */
  statusesAfterRevoke: Record<string, number>;
  /** proof the token was live (and cached) on the workers before the revoke */
  acceptedBeforeRevoke: number;
  revokeMs: { p50: number; max: number };
  failures: string[];
  /** redis-restart: requests started after the revoke AND after Redis was back (empty) */
  requestsAfterRestart?: number;
  /** the variants on clusters of their own (absent when they were not run) */
  variants?: RevocationVariant[];
}

const VARIANT_IDS = ['two-instances', 'redis-restart'] as const;
export type VariantId = (typeof VARIANT_IDS)[number];

export interface RevocationVariant {
  id: VariantId;
  title: string;
  /** null when the variant could not run (see error) */
  figures: Omit<RevocationFigures, 'variants'> | null;
  error: string | null;
}

const VARIANT_TITLES: Record<VariantId, string> = {
  'two-instances': 'two instances on one Redis and one database, revoking through each in turn',
  'redis-restart': 'Redis killed and restarted empty mid-round (after the revoke, and before it)',
};

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
/** a base round's tail: the lanes go on 300 ms after the revoke returned, at their pace; no retry */
const STEADY = { tailMs: 300, tailGapMs: GAP_MS, retryUnavailableMs: 0 };

interface RoundPlan {
  /** lane i sends to dataUrls[i % length] */
  dataUrls: string[];
  /** the service the revoke goes through */
  revokeUrl: string;
  token: BenchToken;
  unitId: number;
  revoker: Employee;
  /** once the token is warm, before the revoke (the lanes hold meanwhile: the budget is for after) */
  beforeRevoke?: () => Promise<void>;
  /** right after the revoke returned 200, while the lanes keep going */
  afterRevoke?: () => Promise<void>;
  /** the lanes go on this long after the revoke returned and afterRevoke finished */
  tailMs: number;
  /** each lane's pause between requests once the revoke returned (spreads the rest of the budget) */
  tailGapMs: number;
  /** retry a 503 revoke (Redis not reachable yet) until this many ms have passed; 0: no retry */
  retryUnavailableMs: number;
}

interface RoundResult {
  samples: Sample[];
  revokeStartedAt: number;
  returnedAt: number;
  /** when afterRevoke finished (null: none ran) */
  afterRevokeAt: number | null;
  revokeStatus: number;
  revokeBody: string;
}

async function round(plan: RoundPlan): Promise<RoundResult> {
  const agents = new Map(plan.dataUrls.map((url) => [url, new http.Agent({ keepAlive: true, maxSockets: LANES })]));
  const pathOf = (url: string) =>
    `${url}/api/v1/analytics/utilization?start_date=2025-06-01&end_date=2025-06-01&page_size=1&cooling_unit_id=${plan.unitId}`;
  const headers = { authorization: `Bearer ${plan.token.raw}` };
  const samples: Sample[] = [];
  let started = 0;
  let returnedAt: number | null = null;
  let holding = false;
  let stopAt = Infinity;
  const firstDeadline = performance.now() + 5000;
  // a hard stop: a revoke that never answers must not hold the lanes forever
  const hardStop = performance.now() + 30_000;

  const lane = async (index: number) => {
    const url = plan.dataUrls[index % plan.dataUrls.length]!;
    while (started < CAP && performance.now() < Math.min(stopAt, hardStop)) {
      if (holding) {
        await sleep(5);
        continue;
      }
      started++;
      const startedAt = performance.now();
      const sample = await request(pathOf(url), { headers, agent: agents.get(url)!, timeoutMs: 5000 }).then(
        ({ status, body }) => ({ startedAt, answer: answerOf(status, body), accepted: status >= 200 && status < 300 }),
        (error: Error) => ({ startedAt, answer: `error ${error.message.slice(0, 40)}`, accepted: false }),
      );
      samples.push(sample);
      await sleep(returnedAt === null ? GAP_MS : plan.tailGapMs);
    }
  };
  const lanes = Array.from({ length: LANES }, (_, i) => lane(i));

  while (samples.filter((s) => s.accepted).length < REVOKE_AFTER_ACCEPTED && performance.now() < firstDeadline) await sleep(1);
  if (plan.beforeRevoke) {
    holding = true;
    await plan.beforeRevoke();
    holding = false;
  }
  const revokeStartedAt = performance.now();
  let revoke: { status: number; body: string };
  for (;;) {
    revoke = await request(`${plan.revokeUrl}/api/v1/api-tokens/${plan.token.id}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${plan.revoker.jwt}`, 'content-type': 'application/json' },
      timeoutMs: 10_000,
    }).catch((error: Error) => ({ status: 0, body: error.message }));
    if (revoke.status !== 503 || performance.now() - revokeStartedAt > plan.retryUnavailableMs) break;
    await sleep(150);
  }
  returnedAt = performance.now();
  let afterRevokeAt: number | null = null;
  if (revoke.status === 200 && plan.afterRevoke) {
    await plan.afterRevoke();
    afterRevokeAt = performance.now();
  }
  stopAt = performance.now() + plan.tailMs;
  await Promise.all(lanes);
  for (const agent of agents.values()) agent.destroy();
  return { samples, revokeStartedAt, returnedAt, afterRevokeAt, revokeStatus: revoke.status, revokeBody: revoke.body };
}

function tally(results: RoundResult[]): Omit<RevocationFigures, 'variants'> {
  const figures: Omit<RevocationFigures, 'variants'> = {
    rounds: results.length,
    acceptedAfterRevoke: 0,
    requestsAfterRevoke: 0,
    statusesAfterRevoke: {},
    acceptedBeforeRevoke: 0,
    revokeMs: { p50: 0, max: 0 },
    failures: [],
  };
  const revokeTimes: number[] = [];
  if (results.some((result) => result.afterRevokeAt !== null)) figures.requestsAfterRestart = 0;
  for (const result of results) {
    if (result.revokeStatus !== 200) figures.failures.push(`revoke answered ${result.revokeStatus}: ${result.revokeBody.slice(0, 200)}`);
    revokeTimes.push(result.returnedAt - result.revokeStartedAt);
    for (const sample of result.samples) {
      if (sample.startedAt > result.returnedAt) {
        figures.requestsAfterRevoke++;
        figures.statusesAfterRevoke[sample.answer] = (figures.statusesAfterRevoke[sample.answer] ?? 0) + 1;
        if (sample.accepted) figures.acceptedAfterRevoke++;
        if (result.afterRevokeAt !== null && sample.startedAt > result.afterRevokeAt) figures.requestsAfterRestart!++;
      } else if (sample.startedAt < result.revokeStartedAt && sample.accepted) {
        figures.acceptedBeforeRevoke++;
      }
    }
  }
  revokeTimes.sort((a, b) => a - b);
  figures.revokeMs = { p50: revokeTimes[Math.floor(revokeTimes.length / 2)] ?? 0, max: revokeTimes.at(-1) ?? 0 };
  return figures;
}

/** Where the variants run: the data set's database (their clusters and tokens go there). */
export interface VariantSetting {
  databaseUrl: string;
  log: (line: string) => void;
}

export async function measureRevocation(
  url: string,
  tokens: BenchToken[],
  unitId: number,
  revoker: Employee,
  variants?: VariantSetting,
): Promise<RevocationFigures> {
  const results: RoundResult[] = [];
  for (const token of tokens) {
    results.push(await round({ dataUrls: [url], revokeUrl: url, token, unitId, revoker, ...STEADY }));
  }
  const figures: RevocationFigures = tally(results);
  // each variant: a third of the main rounds, at least 3
  if (variants) figures.variants = await measureVariants(variants, unitId, revoker, Math.max(3, Math.ceil(tokens.length / 3)));
  return figures;
}

// The variants, on clusters of their own.

/** Fresh Bench Alpha tokens (the revoker's company, every scope), inserted as the kit's others are. */
async function insertTokens(databaseUrl: string, revoker: Employee, count: number): Promise<BenchToken[]> {
  const tokens: BenchToken[] = Array.from({ length: count }, () => ({
    id: randomUUID(),
    raw: generateToken(),
    companyId: revoker.companyId,
    unitIds: [],
  }));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO api_tokens (id, company_id, name, scopes, token_hash, created_by)
       SELECT id, $2, 'bench revocation variant', $3::text[], token_hash, $4 FROM unnest($1::uuid[], $5::bytea[]) AS t (id, token_hash)`,
      [tokens.map((t) => t.id), revoker.companyId, ALL_SCOPES, revoker.userId, tokens.map((t) => hashToken(t.raw))],
    );
  } finally {
    await client.end();
  }
  return tokens;
}

/** /readyz answers 200 (Redis reachable again), or the time runs out. */
async function ready(url: string, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if ((await request(`${url}/readyz`, { timeoutMs: 1000 }).catch(() => ({ status: 0 }))).status === 200) return true;
    await sleep(50);
  }
  return false;
}

async function measureVariants(setting: VariantSetting, unitId: number, revoker: Employee, rounds: number): Promise<RevocationVariant[]> {
  let redis: PrivateRedis | null = null;
  const services: Service[] = [];
  try {
    redis = await startPrivateRedis();
    setting.log(
      `revocation variants: 2 project clusters of ${WORKERS} workers on a private redis-server (${redis.url}), ${rounds} rounds each`,
    );
    for (const name of ['revocation A', 'revocation B'])
      services.push(await startProjectCluster({ name, databaseUrl: setting.databaseUrl, redisUrl: redis.url, env: {} }, setting.log));
    const [a, b] = [services[0]!, services[1]!];
    const privateRedis = redis;

    const variants: RevocationVariant[] = [];
    for (const id of VARIANT_IDS) {
      const tokens = await insertTokens(setting.databaseUrl, revoker, rounds);
      const results: RoundResult[] = [];
      try {
        for (const [i, token] of tokens.entries()) {
          const base = { token, unitId, revoker };
          if (id === 'two-instances') {
            results.push(await round({ ...base, ...STEADY, dataUrls: [a.url, b.url], revokeUrl: (i % 2 === 0 ? a : b).url }));
          } else {
            // even rounds: the markers are lost right after the revoke; odd rounds: Redis comes
            // back empty right before it. The lanes slow down after the revoke, so the rest of the
            // token's budget spans the restart and the reconnection after it.
            const after = i % 2 === 0;
            const restart = async () => {
              await privateRedis.restart();
              if (!after) await ready(a.url, 10_000);
            };
            results.push(
              await round({
                ...base,
                dataUrls: [a.url],
                revokeUrl: a.url,
                ...(after ? { afterRevoke: restart } : { beforeRevoke: restart }),
                tailMs: 1500,
                tailGapMs: 150,
                retryUnavailableMs: 10_000,
              }),
            );
            // the next round starts on a reachable Redis
            await ready(a.url, 10_000);
          }
        }
        const figures = tally(results);
        variants.push({ id, title: VARIANT_TITLES[id], figures, error: null });
        setting.log(
          `  ${id}: ${figures.acceptedAfterRevoke} accepted of ${figures.requestsAfterRevoke} after ${figures.rounds} revokes returned ` +
            `(${JSON.stringify(figures.statusesAfterRevoke)}); ${figures.acceptedBeforeRevoke} accepted before` +
            (figures.requestsAfterRestart === undefined ? '' : `; ${figures.requestsAfterRestart} sent once Redis was back empty`),
        );
      } catch (error) {
        variants.push({ id, title: VARIANT_TITLES[id], figures: null, error: (error as Error).message });
      }
    }
    return variants;
  } catch (error) {
    return VARIANT_IDS.map((id) => ({
      id,
      title: VARIANT_TITLES[id],
      figures: null,
      error: error instanceof Error ? error.message : String(error),
    }));
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await redis?.stop();
  }
}
