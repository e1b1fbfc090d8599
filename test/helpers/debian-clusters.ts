// What the tests' private PostgreSQL servers (pg-private.ts, pg-replica.ts) share: Debian's cluster
// commands (pg_createcluster and friends) for PostgreSQL 15, and dropping clusters, including the
// ones a crashed test run left behind.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';

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
