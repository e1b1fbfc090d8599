// A private PgBouncer (Debian's, 1.18 on bookworm) in front of a private PostgreSQL, for the tests of
// DB_POOLER: its own ini, auth file and pid file in a temporary directory, listening on a free
// loopback port, auth_type trust, run as the postgres OS user (PgBouncer refuses root), logging to
// stderr (kept for assertions and failure messages). Never the system's pgbouncer service, never
// the shared PostgreSQL on 5432. Teardown kills it and removes the directory.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from '../../src/free-port.js';
import { reapOnExit } from './reaper.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export interface PgBouncerOptions {
  /** the PostgreSQL it pools (every database of it) */
  serverPort: number;
  poolMode?: 'transaction' | 'session';
  /** server connections per database and user */
  defaultPoolSize?: number;
  /** start-up parameters it drops instead of refusing (empty: its default) */
  ignoreStartupParameters?: string[];
}

export interface PgBouncer {
  port: number;
  /** a URL of database `database` through the pooler, as the superuser postgres */
  url(database: string): string;
  /** Everything it logged so far. */
  output(): string;
  /** One admin console command (SHOW POOLS, SHOW SERVERS, ...), its rows. */
  admin<R extends pg.QueryResultRow = pg.QueryResultRow>(command: string): Promise<R[]>;
  stop(): Promise<void>;
}

function postgresUser(): { uid: number; gid: number } {
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
  return { uid: uid!, gid: gid! };
}

export async function startPgBouncer(t: Teardown, options: PgBouncerOptions): Promise<PgBouncer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'coldtrack-pgbouncer-'));
  const { uid, gid } = postgresUser();
  chownSync(dir, uid, gid);
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=127.0.0.1 port=${options.serverPort}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      'admin_users = postgres',
      `pool_mode = ${options.poolMode ?? 'transaction'}`,
      `default_pool_size = ${options.defaultPoolSize ?? 20}`,
      'max_client_conn = 1000',
      ...(options.ignoreStartupParameters ? [`ignore_startup_parameters = ${options.ignoreStartupParameters.join(',')}`] : []),
      '',
    ].join('\n'),
  );
  for (const file of ['userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, file), uid, gid);

  let output = '';
  const child: ChildProcess = reapOnExit(spawn('pgbouncer', [join(dir, 'pgbouncer.ini')], { uid, gid, stdio: ['ignore', 'pipe', 'pipe'] }));
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  let stopped = false;
  async function stop() {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
  t.teardown(stop);

  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = async <R extends pg.QueryResultRow>(command: string) => {
    const client = new pg.Client({ connectionString: url('pgbouncer'), connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      return (await client.query<R>(command)).rows;
    } finally {
      await client.end();
    }
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`pgbouncer exited:\n${output}`);
    }
    if (/process up|listening on/i.test(output)) {
      try {
        await admin('SHOW VERSION');
        break;
      } catch {
        // not answering yet
      }
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`pgbouncer did not start within 10 s:\n${output}`);
    }
    await sleep(50);
  }
  return { port, url, output: () => output, admin, stop };
}
