// A private PostgreSQL 15 server a test may stop and start again, watch in pg_stat_activity, or put
// a pooler in front of: a Debian cluster of its own (pg_createcluster, trust auth, 127.0.0.1 on a
// free port, fsync off), named ct_private_<pid>_<rand>, optionally with TimescaleDB preloaded (the
// extension that ../shared/timescaledb/start.sh installs into the machine's PostgreSQL 15) and with
// extra settings. The shared servers are never touched. stop() is a fast shutdown (every session
// cut, as an outage or a failover does); start() brings the same data back on the same port.
// Teardown drops the cluster; clusters a crashed test run left behind (their pid is gone) are
// dropped on the next start.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { freePort } from '../../src/free-port.js';
import { clusterUrl, createCluster, dropCluster, dropLeftovers, queryOnce, startCluster, stopCluster } from './debian-clusters.js';

const NAME = /^ct_private_(\d+)_[0-9a-f]+$/;

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface PrivatePostgres {
  name: string;
  port: number;
  /** a URL of `database` on this server, as the superuser postgres */
  url(database?: string): string;
  /** CREATE DATABASE (a random name unless given); its URL as the superuser. */
  createDatabase(name?: string): Promise<{ name: string; url: string }>;
  /** One query (the postgres database unless named). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[], database?: string): Promise<R[]>;
  /** Fast shutdown: sessions are cut, new connections refused. Resolves once it is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
}

const TIMESCALE = [
  "shared_preload_libraries = 'timescaledb'",
  'timescaledb.telemetry_level = off',
  'timescaledb.max_background_workers = 4',
  'max_worker_processes = 12',
];

export async function startPrivatePostgres(
  t: Teardown,
  options: { timescale?: boolean; /** postgresql.conf lines */ settings?: string[] } = {},
): Promise<PrivatePostgres> {
  await dropLeftovers(NAME, 1);
  const name = `ct_private_${process.pid}_${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await dropCluster(name);
  };
  t.teardown(drop);
  try {
    await createCluster(name, port, [...(options.timescale ? TIMESCALE : []), ...(options.settings ?? [])]);
    await startCluster(name);
  } catch (error) {
    await drop();
    throw error;
  }
  const url = (database?: string) => clusterUrl(port, database);
  return {
    name,
    port,
    url,
    async createDatabase(database = `coldtrack_private_${randomBytes(4).toString('hex')}`) {
      await queryOnce(url(), `CREATE DATABASE ${database}`);
      return { name: database, url: url(database) };
    },
    query: (sql, params, database) => queryOnce(url(database), sql, params),
    stop: () => stopCluster(name),
    start: () => startCluster(name),
  };
}
