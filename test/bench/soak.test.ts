// The P14 soak (bench/soak.ts) for real, shortened to half a minute of load: the project's compiled
// 2-worker cluster on a fresh data set with a Redis of its own. Every interval has its sample (RSS
// and fds of both workers, event-loop lag, PostgreSQL and Redis connections), the mixed stream,
// the token life cycles and the ingest are answered as they must be (no 5xx, no 429, no failed
// call), the report carries a verdict of every check, and its files and run line are written.
// Afterwards nothing is left: no database, no worker, no Redis. Then `npm run bench -- --soak`
// interrupted with Ctrl-C during its load leaves nothing either.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import t, { type Test } from 'tap';
import { cleanUp } from '../../bench/kit/processes.js';
import { appendRecord, readRecords } from '../../bench/kit/run-record.js';
import { soakText } from '../../bench/kit/report.js';
import { soakRecordOf } from '../../bench/kit/soak-verdict.js';
import { adminUrl } from '../../bench/kit/throwaway-db.js';
import { measureSoak } from '../../bench/soak.js';
import { repoRoot } from '../helpers/entry.js';
import { reapOnExit } from '../helpers/reaper.js';

t.setTimeout(900_000);
const scratch = mkdtempSync(join(tmpdir(), 'coldtrack-soak-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1;
  } finally {
    await client.end();
  }
}
/** What the log names: the data set's database, the workers, the Redis port. */
function leftovers(log: string) {
  return {
    database: /data set (coldtrack_bench_soak_[0-9a-f]+)/.exec(log)?.[1],
    workers: (/workers (\d+), (\d+);/.exec(log) ?? []).slice(1).map(Number),
    redisPort: Number(/Redis [\d.]+ at redis:\/\/127\.0\.0\.1:(\d+)/.exec(log)?.[1]),
  };
}
async function assertNothingLeft(t: Test, log: string) {
  const left = leftovers(log);
  t.ok(left.database, 'the log names the database');
  t.equal(left.workers.length, 2, 'the log names both workers');
  t.notOk(await databaseExists(left.database!), `${left.database} dropped`);
  for (const pid of left.workers) t.notOk(alive(pid), `worker ${pid} gone`);
  t.notOk(await portOpen(left.redisPort), `the soak's Redis (port ${left.redisPort}) stopped`);
}

t.test('half a minute of soak: samples, a verdict, its record; nothing left after', async (t) => {
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  let report: Awaited<ReturnType<typeof measureSoak>>;
  try {
    report = await measureSoak({ minutes: 0.5, rate: 10, profile: 'postgres' }, log);
  } finally {
    await cleanUp(log);
  }
  const text = lines.join('\n');
  t.ok(report.intervals.length >= 3, `${report.intervals.length} intervals of 10 s`);
  for (const interval of report.intervals) {
    t.ok(interval.requests > 0, `${interval.atS} s: requests answered`);
    t.equal(interval.otherNon2xx, 0, `${interval.atS} s: no 4xx (no token or employee over its limit, every path valid)`);
    t.equal(interval.sample.workers.length, 2);
    for (const worker of interval.sample.workers) {
      t.ok(worker.rssMb! > 30, `worker ${worker.pid} RSS ${worker.rssMb} MB`);
      t.ok(worker.fds! > 5, `worker ${worker.pid} ${worker.fds} fds`);
    }
    t.ok(interval.sample.lagP99Ms! > 0, 'event-loop lag from /metrics');
    t.ok(interval.sample.postgresConnections! >= 2, `${interval.sample.postgresConnections} PostgreSQL connections of the service`);
    t.ok(interval.sample.redisConnections! >= 2, `${interval.sample.redisConnections} Redis connections of the service`);
  }
  t.same(report.failures, [], 'every management call and the ingest answered as they must');
  t.match(text, /warm-up: 10 s at 10\/s/);

  const record = soakRecordOf(report, ['--soak 0.5'], { hash: 'b'.repeat(40), dirty: false, movedTo: null });
  t.same(
    record.checks.map((check) => check.id),
    ['memory', 'latency', 'fds', 'postgres', 'redis', 'errors'],
  );
  t.ok(record.checks.find((check) => check.id === 'errors')!.pass, 'no 5xx');
  t.match(soakText(record), /\*\*P14 (PASS|MISSED)\*\*[^]*`npm run bench -- --soak 0.5`/);
  t.equal(record.series.length, report.intervals.length, 'the record keeps every sample');
  appendRecord(join(scratch, 'runs.jsonl'), record);
  t.same(
    readRecords(join(scratch, 'runs.jsonl')).map((line) => line.kind),
    ['soak'],
    'the line reads back as a run record',
  );
  await assertNothingLeft(t, text);
});

t.test('Ctrl-C during the load: every process stopped and the database dropped', async (t) => {
  const child: ChildProcess = reapOnExit(
    spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--soak', '5', '--soak-rate', '5'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  const interrupted = new Promise<void>((resolve) =>
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/\d\.\d min: /.test(stderr)) resolve(); // the first sample: load, side traffic and probes all running
    }),
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await Promise.race([interrupted, exited]);
  child.kill('SIGINT');
  t.equal(await exited, 130, `exit 130 on Ctrl-C:\n${stderr.slice(-1500)}`);
  t.match(stderr, /interrupted: stopping every process and dropping the database/);
  await assertNothingLeft(t, stderr);
});
