// Where the data endpoints' page queries go: the read replica (DATABASE_READ_URL) while it answers,
// the primary while it does not. A replica that cannot be reached (refused, connect timeout,
// connection cut, shutting down or starting up) is a lost replica: the read that met it runs again
// on the primary, and so does every read after it, until a probe (every REPLICA_PROBE_MS, and each
// /readyz) finds the replica answering again. One line and one count per outage, one line when it
// is back. A slow replica is not a lost one: a read past its deadline is a 503, as on the primary
// (moving every read of a replica too slow for them onto the primary would take the primary down
// with it). Readiness says "degraded" meanwhile, not "unavailable": the instance still serves
// everything, and every instance would be pulled from the load balancer at once otherwise.
// Without a replica, everything reads the primary and nothing here changes that.
import type pg from 'pg';
import { isDatabaseUnavailable } from './unavailable.js';
import { lookup, poolSettings, QUERY_DEADLINE_MESSAGE, type PoolSettings } from './pool.js';

/** How often a lost replica is tried again (a SELECT 1) in the background. */
export const REPLICA_PROBE_MS = 2000;

export interface ReadTarget {
  pool: pg.Pool;
  /** how its connections are made (rollup threads open their own) */
  settings: PoolSettings;
  onReplica: boolean;
}

export interface ReadRoutingEvents {
  /** the replica could not be reached: data reads go to the primary (once per outage) */
  onReplicaLost?: (error: unknown) => void;
  /** the replica answers again: data reads go back to it */
  onReplicaBack?: () => void;
}

export type ReplicaState = 'none' | 'ok' | 'lost';

/** Whether an error of a read means the replica cannot be reached, rather than a slow or refused statement. */
export function replicaUnreachable(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === '57014' || message === QUERY_DEADLINE_MESSAGE) return false;
  return isDatabaseUnavailable(error);
}

export function createReadRouting(primary: pg.Pool, replica: pg.Pool | null, events: ReadRoutingEvents = {}) {
  const onPrimary: ReadTarget = { pool: primary, settings: poolSettings(primary), onReplica: false };
  const onReplica: ReadTarget | null = replica ? { pool: replica, settings: poolSettings(replica), onReplica: true } : null;
  let lost = false;
  let probe: NodeJS.Timeout | undefined;
  let closed = false;

  function markLost(error: unknown) {
    if (lost || closed) return;
    lost = true;
    events.onReplicaLost?.(error);
    scheduleProbe();
  }

  function markBack() {
    if (!lost) return;
    lost = false;
    clearTimeout(probe);
    events.onReplicaBack?.();
  }

  function scheduleProbe() {
    if (closed) return;
    probe = setTimeout(() => void check().finally(() => lost && scheduleProbe()), REPLICA_PROBE_MS).unref();
  }

  /**
   * One SELECT 1 on the replica; updates the state either way. True when it answered. Any failure
   * counts here, its deadline too: a server that cannot answer SELECT 1 in seconds is hung.
   */
  async function check(): Promise<boolean> {
    if (!replica) return true;
    try {
      await lookup(replica, 'SELECT 1', []);
      markBack();
      return true;
    } catch (error) {
      markLost(error);
      return false;
    }
  }

  async function run<T>(read: (target: ReadTarget) => Promise<T>): Promise<T> {
    if (!onReplica || lost) return read(onPrimary);
    try {
      return await read(onReplica);
    } catch (error) {
      if (!replicaUnreachable(error)) throw error;
      markLost(error);
      return read(onPrimary);
    }
  }

  // pg's query() overloads, promise forms only (what the routes use)
  const query = ((...args: unknown[]) =>
    run((target) => (target.pool.query as (...queryArgs: unknown[]) => Promise<unknown>)(...args))) as unknown as pg.Pool['query'];

  return {
    /** pg.Pool#query for data reads, routed (promise forms only). */
    query,
    run,
    /** 'none' without a replica; 'lost' while data reads are on the primary for want of it. */
    state: (): ReplicaState => (!replica ? 'none' : lost ? 'lost' : 'ok'),
    /** Probes the replica now (readiness); resolves with the state after it. */
    async probe(): Promise<ReplicaState> {
      await check();
      return !replica ? 'none' : lost ? 'lost' : 'ok';
    },
    /** The primary's and the replica's connection settings, for rollup threads (null: no replica). */
    settings: () => ({ primary: onPrimary.settings, replica: onReplica?.settings ?? null }),
    close() {
      closed = true;
      clearTimeout(probe);
    },
  };
}

export type ReadRouting = ReturnType<typeof createReadRouting>;
