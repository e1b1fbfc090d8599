// Usage per API token: requests per UTC day, route and answer class, and the last client, counted
// in memory by each worker and added to the database by the last_used write-behind's flush
// (src/tokens/last-used.ts), never one write per request. Counting a request is a few Map lookups
// with strings the request already holds; the arrays for the batched statement are built per flush.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import type { Clock } from '../time.js';
import { DAY_MS } from '../time.js';

const sql = loadQueries('token-usage', ['recordTokenUsage', 'pruneTokenUsage', 'tokenUsageByDay', 'tokenLastClient']);

/** The answer classes usage is counted in; 304 (a conditional request's "not modified") and 429 apart. */
export const USAGE_CLASSES = ['2xx', '304', '4xx', '429', '5xx'] as const;
export type UsageClass = (typeof USAGE_CLASSES)[number];

/** Usage rows are kept this many days (pruned by the flushes, once a UTC day per process). */
export const TOKEN_USAGE_RETENTION_DAYS = 400;
/** A flush's id is kept this long: any retry of it comes far sooner. */
const FLUSH_ID_RETENTION_MS = 7 * DAY_MS;
const USER_AGENT_MAX = 512;

/** The data surface answers no 1xx and no 3xx but 304: everything else below 400 is a success. */
function classIndex(status: number): number {
  if (status === 304) return 1;
  if (status === 429) return 3;
  if (status >= 500) return 4;
  return status >= 400 ? 2 : 0;
}

interface TokenTally {
  seenAt: number;
  ip: string;
  userAgent: string | undefined;
  /** UTC day (YYYY-MM-DD) -> route -> requests per class, in USAGE_CLASSES order */
  days: Map<string, Map<string, number[]>>;
}

/** A flush as sent: resent unchanged, with its id, until the database has answered it. */
interface Batch {
  id: string;
  params: unknown[];
}

function dayText(ms: number) {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The statement's parameters for these tallies ($3.. of recordTokenUsage). */
function batchOf(tallies: Map<string, TokenTally>): Batch {
  const counts: [string[], string[], string[], string[], number[]] = [[], [], [], [], []];
  const clients: [string[], Date[], string[], Array<string | null>] = [[], [], [], []];
  for (const [tokenId, tally] of tallies) {
    for (const [day, endpoints] of tally.days) {
      for (const [endpoint, perClass] of endpoints) {
        perClass.forEach((requests, index) => {
          if (requests === 0) return;
          counts[0].push(tokenId);
          counts[1].push(day);
          counts[2].push(endpoint);
          counts[3].push(USAGE_CLASSES[index]!);
          counts[4].push(requests);
        });
      }
    }
    clients[0].push(tokenId);
    clients[1].push(new Date(tally.seenAt));
    clients[2].push(tally.ip);
    clients[3].push(tally.userAgent?.slice(0, USER_AGENT_MAX) ?? null);
  }
  return { id: randomUUID(), params: [...counts, ...clients] };
}

export function createTokenUsage(pool: pg.Pool, clock: Clock) {
  let tallies = new Map<string, TokenTally>();
  let unsettled: Batch | null = null;
  let prunedOn = '';
  // the current UTC day's text, recomputed when a request falls outside it
  let today = '';
  let todayStartsAt = 0;
  let todayEndsAt = 0;

  function dayOf(ms: number) {
    if (ms < todayStartsAt || ms >= todayEndsAt) {
      todayStartsAt = ms - (ms % DAY_MS);
      todayEndsAt = todayStartsAt + DAY_MS;
      today = dayText(ms);
    }
    return today;
  }

  async function send(batch: Batch) {
    await pool.query(sql.recordTokenUsage, [batch.id, clock.now(), ...batch.params]);
  }

  async function pruneOncePerDay() {
    const now = clock.now().getTime();
    const day = dayText(now);
    if (prunedOn === day) return;
    await pool.query(sql.pruneTokenUsage, [dayText(now - TOKEN_USAGE_RETENTION_DAYS * DAY_MS), new Date(now - FLUSH_ID_RETENTION_MS)]);
    prunedOn = day;
  }

  return {
    /** One answered request of a token: called by the data surface's onResponse hook. */
    count(tokenId: string, endpoint: string, status: number, ip: string, userAgent: string | undefined, atMs: number) {
      const day = dayOf(atMs);
      let tally = tallies.get(tokenId);
      if (tally === undefined) {
        tally = { seenAt: atMs, ip, userAgent, days: new Map() };
        tallies.set(tokenId, tally);
      } else if (atMs >= tally.seenAt) {
        tally.seenAt = atMs;
        tally.ip = ip;
        tally.userAgent = userAgent;
      }
      let endpoints = tally.days.get(day);
      if (endpoints === undefined) {
        endpoints = new Map();
        tally.days.set(day, endpoints);
      }
      let perClass = endpoints.get(endpoint);
      if (perClass === undefined) {
        perClass = [0, 0, 0, 0, 0];
        endpoints.set(endpoint, perClass);
      }
      perClass[classIndex(status)]!++;
    },

    /**
     * Adds what was counted since the last flush. A batch whose answer did not arrive is sent
     * again, unchanged and under the same id, before anything newer: the statement adds a flush's
     * counts only once (sql/queries/token-usage.sql), whether or not the lost answer had committed.
     * Meanwhile new requests are counted into the next batch. Throws when the database could not
     * be reached; nothing is lost then but what the process holds when it dies.
     */
    async flush() {
      if (unsettled) {
        await send(unsettled);
        unsettled = null;
      }
      if (tallies.size > 0) {
        unsettled = batchOf(tallies);
        tallies = new Map();
        await send(unsettled);
        unsettled = null;
      }
      await pruneOncePerDay();
    },

    /** Requests counted and not yet written (tests; the shutdown log). */
    pendingTokens: () => tallies.size + (unsettled ? 1 : 0),
  };
}

export type TokenUsage = ReturnType<typeof createTokenUsage>;

export interface UsageRow {
  day: string;
  endpoint: string;
  class: UsageClass;
  requests: number;
}

/** What was written of a token's usage, days from..to (YYYY-MM-DD, inclusive), and its last client. */
export async function readTokenUsage(pool: pg.Pool, tokenId: string, from: string, to: string) {
  const [usage, client] = await Promise.all([
    pool.query<UsageRow>(sql.tokenUsageByDay, [tokenId, from, to]),
    pool.query<{ ip: string | null; user_agent: string | null }>(sql.tokenLastClient, [tokenId]),
  ]);
  return { rows: usage.rows, lastClient: client.rows[0] ?? null };
}
