// A private PostgreSQL 15 primary and its streaming replica, for tests of DATABASE_READ_URL (a
// server alone is pg-private.ts). The shared server on 5432 is never touched: both are Debian clusters of their own (pg_createcluster)
// on free loopback ports, named ct_primary_<pid>_<rand> / ct_replica_<pid>_<rand>:
//   - the primary: pg_createcluster --auth=trust, listen_addresses 127.0.0.1, wal_level replica
//     (Debian's pg_hba.conf then trusts replication from 127.0.0.1 too), fsync off (a test);
//   - the replica: a second cluster whose data directory is replaced by
//     `pg_basebackup -R -X stream` of the primary (run as the postgres OS user: PostgreSQL refuses
//     root), started as a hot standby; ready once pg_is_in_recovery() and its WAL receiver streams.
// Teardown: pg_dropcluster --stop of both (and their conf.d file). Clusters a crashed test run
// left behind (their pid is gone) are dropped on the next start. About 3-5 s to start here.
//
// Replica lag on demand: pauseReplay() (pg_wal_replay_pause() on the replica: WAL still arrives,
// nothing new becomes visible) and resumeReplay(). A lost replica: stopReplica() (a fast shutdown,
// its port then refuses) and startReplica() (it resumes streaming from where it stopped).
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createPool } from '../../src/db/pool.js';
import { freePort } from '../../src/free-port.js';
import { migrateWithProfile } from './db.js';
import { type CompanyFixture, createCompany } from './fixtures.js';
import {
  clusterUrl,
  createCluster,
  dropCluster,
  dropLeftovers,
  queryOnce as query,
  sh,
  startCluster,
  stopCluster,
  VERSION,
} from './debian-clusters.js';

const NAME = /^ct_(primary|replica)_(\d+)_[0-9a-f]+$/;

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface PgServer {
  /** the Debian cluster name (pg_lsclusters) */
  name: string;
  port: number;
  /** a URL of database `database` on this server, as the superuser postgres */
  url(database?: string): string;
}

export interface PgReplicaPair {
  primary: PgServer;
  replica: PgServer;
  /** CREATE DATABASE on the primary; resolves once the replica has it too. */
  createDatabase(name?: string): Promise<{ name: string; primaryUrl: string; replicaUrl: string }>;
  /** One query on the replica (the postgres database unless named). */
  queryReplica<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[], database?: string): Promise<R[]>;
  /** One query on the primary. */
  queryPrimary<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[], database?: string): Promise<R[]>;
  /** The replica lost: a fast shutdown (its port refuses until startReplica). */
  stopReplica(): Promise<void>;
  /** Starts the replica again; resolves once it streams from the primary. */
  startReplica(): Promise<void>;
  /** Replica lag on demand: WAL keeps arriving, nothing new is replayed (visible) until resumed. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Resolves once the replica has replayed everything the primary had flushed (all it committed) when called. */
  waitForReplay(timeoutMs?: number): Promise<void>;
  /** Stops and drops both clusters (also run by teardown). */
  stop(): Promise<void>;
}

async function poll(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

const server = (name: string, port: number): PgServer => ({ name, port, url: (database) => clusterUrl(port, database) });

/** What a primary needs to stream to a replica; Debian's pg_hba.conf then trusts replication from 127.0.0.1. */
const PRIMARY = ['wal_level = replica', 'max_wal_senders = 5'];
export async function startPgReplicaPair(t: Teardown): Promise<PgReplicaPair> {
  await dropLeftovers(NAME, 2);
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  if (primaryPort === replicaPort) throw new Error('freePort answered the same port twice');
  const primary = server(`ct_primary_${suffix}`, primaryPort);
  const replica = server(`ct_replica_${suffix}`, replicaPort);
  let stopped = false;

  async function stop() {
    if (stopped) return;
    stopped = true;
    await Promise.all([dropCluster(replica.name), dropCluster(primary.name)]);
  }
  t.teardown(stop);

  const streaming = () =>
    poll(
      'the replica streaming from the primary',
      async () => {
        const [row] = await query<{ recovering: boolean; status: string | null }>(
          replica.url(),
          'SELECT pg_is_in_recovery() AS recovering, (SELECT status FROM pg_stat_wal_receiver) AS status',
        );
        const senders = await query<{ state: string }>(primary.url(), 'SELECT state FROM pg_stat_replication');
        return row!.recovering && row!.status === 'streaming' && senders.some((sender) => sender.state === 'streaming');
      },
      15_000,
    );

  const pair: PgReplicaPair = {
    primary,
    replica,
    async createDatabase(name = `coldtrack_replica_${randomBytes(4).toString('hex')}`) {
      await query(primary.url(), `CREATE DATABASE ${name}`);
      await poll(
        `database ${name} on the replica`,
        async () => (await query(replica.url(), 'SELECT 1 FROM pg_database WHERE datname = $1', [name])).length === 1,
        15_000,
      );
      return { name, primaryUrl: primary.url(name), replicaUrl: replica.url(name) };
    },
    queryReplica: (sql, params, database) => query(replica.url(database), sql, params),
    queryPrimary: (sql, params, database) => query(primary.url(database), sql, params),
    stopReplica: () => stopCluster(replica.name),
    async startReplica() {
      await startCluster(replica.name);
      await streaming();
    },
    async pauseReplay() {
      await query(replica.url(), 'SELECT pg_wal_replay_pause()');
      await poll(
        'replay paused',
        async () =>
          (await query<{ state: string }>(replica.url(), 'SELECT pg_get_wal_replay_pause_state() AS state'))[0]!.state === 'paused',
        5000,
        20,
      );
    },
    async resumeReplay() {
      await query(replica.url(), 'SELECT pg_wal_replay_resume()');
    },
    async waitForReplay(timeoutMs = 15_000) {
      // the flush position, not the insert one: a record nobody commits (the bgwriter's
      // running-xacts snapshot) can sit in a partly filled WAL page the WAL writer never flushes on an
      // idle primary, so the replica never receives it and a wait for the insert position times out
      // (it did in CI). Every committed transaction is flushed, so this covers all the tests wrote.
      const [{ lsn }] = (await query<{ lsn: string }>(primary.url(), 'SELECT pg_current_wal_flush_lsn()::text AS lsn')) as [
        { lsn: string },
      ];
      await poll(
        `the replica to replay up to ${lsn}`,
        async () => {
          const [row] = await query<{ caught_up: boolean }>(replica.url(), 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught_up', [
            lsn,
          ]);
          return row!.caught_up;
        },
        timeoutMs,
        50,
      );
    },
    stop,
  };

  try {
    await createCluster(primary.name, primary.port, PRIMARY);
    await startCluster(primary.name);
    // the replica's own cluster (ports, logs, conf) around a data directory cloned from the primary
    await createCluster(replica.name, replica.port, [...PRIMARY, 'hot_standby = on', 'hot_standby_feedback = on']);
    const dataDir = `/var/lib/postgresql/${VERSION}/${replica.name}`;
    await sh('find', [dataDir, '-mindepth', '1', '-delete']);
    await sh('runuser', [
      '-u',
      'postgres',
      '--',
      'pg_basebackup',
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      dataDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ]);
    await startCluster(replica.name);
    await streaming();
  } catch (error) {
    await stop();
    throw error;
  }
  return pair;
}

/**
 * A new database of `pair`, migrated on the postgres profile, with a pool of 3 on its primary
 * (ended with the test) and one company, Acme: what the replica tests start from.
 */
export async function replicatedDatabaseWithCompany(t: Teardown, pair: PgReplicaPair) {
  const database = await pair.createDatabase();
  await migrateWithProfile(database.primaryUrl, 'postgres');
  const primary = createPool(database.primaryUrl, 3, { onError: () => {} });
  t.teardown(() => primary.end());
  const acme: CompanyFixture = await createCompany(primary, 'Acme');
  return { database, primary, acme };
}
