// A private PostgreSQL 15 server a test may stop and start again: a Debian cluster of its own
// (pg_createcluster, trust auth, 127.0.0.1 on a free port, fsync off), named
// ct_private_<pid>_<rand>, optionally with TimescaleDB preloaded (the extension that
// ../shared/timescaledb/start.sh installs into the machine's PostgreSQL 15). The shared servers
// are never touched. stop() is a fast shutdown (every session cut, as an outage or a failover
// does); start() brings the same data back on the same port. Teardown drops the cluster; clusters
// a crashed test run left behind (their pid is gone) are dropped on the next start.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { freePort } from '../../src/free-port.js';
import { BIN, dropCluster, dropLeftovers, sh, VERSION } from './debian-clusters.js';

const NAME = /^ct_private_(\d+)_[0-9a-f]+$/;

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface PrivatePostgres {
  name: string;
  port: number;
  /** a URL of `database` on this server, as the superuser postgres */
  url(database?: string): string;
  /** Fast shutdown: sessions are cut, new connections refused. Resolves once it is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port; resolves once it accepts connections. */
  start(): Promise<void>;
}

/** pg_ctl as the postgres user (PostgreSQL refuses root), on the cluster's Debian configuration. */
const pgCtl = (name: string, ...args: string[]) =>
  sh('runuser', ['-u', 'postgres', '--', `${BIN}/pg_ctl`, ...args, '-w', '-s', '-t', '30', '-D', `/var/lib/postgresql/${VERSION}/${name}`]);

export async function startPrivatePostgres(t: Teardown, options: { timescale?: boolean } = {}): Promise<PrivatePostgres> {
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

  const start = () =>
    pgCtl(
      name,
      'start',
      '-l',
      `/var/log/postgresql/postgresql-${VERSION}-${name}.log`,
      '-o',
      `-c config_file=/etc/postgresql/${VERSION}/${name}/postgresql.conf`,
    ).then(() => {});
  try {
    await sh('pg_createcluster', [VERSION, name, '-p', String(port), '--', '--auth=trust', '--no-sync']);
    // pg_createcluster's -o writes 127.0.0.1 unquoted (a syntax error): conf.d is read after the file
    writeFileSync(
      `/etc/postgresql/${VERSION}/${name}/conf.d/coldtrack-test.conf`,
      [
        "listen_addresses = '127.0.0.1'",
        'fsync = off',
        'full_page_writes = off',
        'shared_buffers = 32MB',
        'max_connections = 60',
        ...(options.timescale
          ? [
              "shared_preload_libraries = 'timescaledb'",
              'timescaledb.telemetry_level = off',
              'timescaledb.max_background_workers = 4',
              'max_worker_processes = 12',
            ]
          : []),
      ].join('\n') + '\n',
    );
    await start();
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    name,
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    stop: () => pgCtl(name, 'stop', '-m', 'fast').then(() => {}),
    start,
  };
}
