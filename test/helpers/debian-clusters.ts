// What the tests' private PostgreSQL servers (pg-private.ts, pg-replica.ts) share: Debian's cluster
// commands (pg_createcluster and friends) for PostgreSQL 15, starting and stopping a cluster,
// one-off queries, and dropping clusters, including the ones a crashed test run left behind.
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
export const VERSION = '15';
export const BIN = `/usr/lib/postgresql/${VERSION}/bin`;

/** Output of a command, or a thrown error carrying its stdout and stderr. */
export async function sh(command: string, args: string[], timeoutMs = 60_000): Promise<string> {
  try {
    return (await run(command, args, { timeout: timeoutMs })).stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

/** A URL of `database` on a private server, as the superuser postgres. */
export const clusterUrl = (port: number, database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;

/**
 * Creates a cluster on `port` with a test server's settings (trust auth, loopback only, no fsync:
 * a private test server, not a durable one) and `extra` lines after them.
 */
export async function createCluster(name: string, port: number, extra: string[] = []) {
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
      ...extra,
    ].join('\n') + '\n',
  );
}

/** pg_ctl as the postgres user (PostgreSQL refuses root), on the cluster's Debian configuration. */
const pgCtl = (name: string, ...args: string[]) =>
  sh('runuser', ['-u', 'postgres', '--', `${BIN}/pg_ctl`, ...args, '-w', '-s', '-t', '30', '-D', `/var/lib/postgresql/${VERSION}/${name}`]);

/**
 * Starts a cluster; resolves once it accepts connections: what pg_ctlcluster start does, without
 * the ~2.5 s it spends checking afterwards.
 */
export async function startCluster(name: string) {
  await pgCtl(
    name,
    'start',
    '-l',
    `/var/log/postgresql/postgresql-${VERSION}-${name}.log`,
    '-o',
    `-c config_file=/etc/postgresql/${VERSION}/${name}/postgresql.conf`,
  );
}

/** Fast shutdown: every session cut, as an outage or a failover does; new connections refused. */
export async function stopCluster(name: string) {
  await pgCtl(name, 'stop', '-m', 'fast');
}

/** One query on its own connection. */
export async function queryOnce<R extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export async function dropCluster(name: string) {
  await sh('pg_dropcluster', ['--stop', VERSION, name], 30_000).catch(() => {});
  // the conf.d file is ours: pg_dropcluster leaves a directory holding files it did not create
  rmSync(`/etc/postgresql/${VERSION}/${name}`, { recursive: true, force: true });
}

/**
 * Drops the clusters whose names `pattern` matches and whose creating test process (the pid in
 * the pattern's group `pidGroup`) is gone: a test run that died before its teardown.
 */
export async function dropLeftovers(pattern: RegExp, pidGroup: number) {
  const listing = await sh('pg_lsclusters', ['--no-header']).catch(() => '');
  for (const line of listing.split('\n')) {
    const [version, name] = line.trim().split(/\s+/);
    const match = version === VERSION && name ? pattern.exec(name) : null;
    if (!match) continue;
    try {
      process.kill(Number(match[pidGroup]), 0);
    } catch (error) {
      // EPERM: someone else's process, alive
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') await dropCluster(name!);
    }
  }
}
