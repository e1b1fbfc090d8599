// `npm run bench -- --scale`: the P9 scale curve, a mode of its own (bench/run.ts starts it). Each
// storage profile's curve runs in a child process (bench/scale-profile.ts), one profile after the
// other, so one database exists at a time and the two never measure each other; a profile without
// a server is NOT MEASURED with the reason. Then the curves, the targets, peak disk and wall time
// on stdout, and the JSON in bench/results/.
// Its line goes to bench/results/runs.jsonl, and with --publish to the history and the docs (kit/publish.ts).
//   npm run bench -- --scale [--scale-max 1M|10M|100M] [--profile postgres|timescale|both] [--publish]
// Needs the local PostgreSQL (BENCH_ADMIN_URL) and, for timescale, a TimescaleDB
// (BENCH_TIMESCALE_URL or ../shared/timescaledb/start.sh). 100M needs ~17 GB free (see docs/benchmarks.md).
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { onCleanUp, stopAll, track, wasInterrupted } from './kit/processes.js';
import { commitMeasured, machineOfRun, repoRoot, treeState } from './kit/checkout.js';
import { recordRun } from './kit/publish.js';
import { scaleRunRecord } from './kit/run-record.js';
import { DAYS, END, INGEST, PROBE_UNIT, type ProfileCurve, ROUNDS, type ScaleOptions, stepsUpTo, WARM_ROUNDS } from './kit/scale-plan.js';
import { formatScaleReport, judgeTargets, type ProfileOutcome, type ScaleReport, writeScaleReport } from './kit/scale-report.js';
import { profileServer, type SensorProfile, shownUrl } from './kit/sensor-profiles.js';
import { adminUrl } from './kit/throwaway-db.js';

const METHOD = [
  `Each size is a fleet of units with the same ${DAYS} days of 15-minute temperature and humidity readings ending ${END.toISOString().slice(0, 10)} ` +
    '(src/sensors/generate.ts, seeded: the same readings every run), built in a database of its own that is dropped before the next is built. ' +
    'The readings go through the real ingest (CSV parsed and validated, binary COPY in batches, two at once) in time order, every unit at one instant then the next, as a fleet in service writes them. ' +
    "The 1M database is kept to the end and measured again beside each larger size, alternating request by request and batch by batch: the P9 ratios come from those pairs, so the machine's noise hits both sides.",
  `Then the store's upkeep as it stands at ${END.toISOString().slice(0, 10)}: postgres, partitions and the rollups' closed months compacted; ` +
    "timescale, the real policies run with CALL run_job, their offsets moved back so they act as on that date (aggregates refreshed and in the columnstore, the readings' chunks compressed up to a week before it); then VACUUM ANALYZE.",
  `Latency: unit ${PROBE_UNIT}'s requests through the real app (fastify inject, a sensor_data token), ${WARM_ROUNDS} warm-up rounds then the median of ${ROUNDS}, ` +
    "each round in another order; the app's clock jumps an hour before each request, so no cached counts or page boundaries help (the database's pages are warm).",
  `Ingest: ${INGEST.rounds} live batches, each the next ${INGEST.days} days of a ${INGEST.units}-unit fleet after everything the store holds (the same readings at every size), ` +
    'through the ingest as npm run ingest runs it; the figure is their median rate. The 1M store beside a larger size has taken the live batches of the steps before (about 1.4 M readings a step).',
  'Bytes a reading: the readings (every partition or chunk, compressed ones too) and both aggregates, indexes and TOAST included, after the upkeep, divided by the readings of the size (the live batches come later).',
  "Peak disk: pg_database_size of the size's database and the 1M one beside it, sampled every 5 s; the file system figure is the growth of the used space under the server's data directory (WAL and any other writer included).",
];

/** One profile's curve from its child process: its stderr passed through, its last stdout line parsed. */
function runProfile(profile: SensorProfile, options: ScaleOptions): Promise<ProfileOutcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/scale-profile.ts', '--profile', profile, '--scale-max', options.max], {
      cwd: repoRoot,
      // BENCH_TIMESCALE_URL: set by sensor-profiles.ts once the server was found
      env: { ...process.env, BENCH_ADMIN_URL: adminUrl(), BENCH_SENSOR_PROFILE: profile },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    track(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('exit', (code, signal) => {
      // the app's own log lines may share stdout: the curve is the last line that is one
      const line = output
        .trim()
        .split('\n')
        .reverse()
        .find((text) => text.startsWith('{"profile"'));
      let curve: ProfileCurve | null = null;
      try {
        const parsed = line ? (JSON.parse(line) as Partial<ProfileCurve> & { targets?: Record<string, { detail?: string }> }) : null;
        if (parsed?.steps) curve = parsed as ProfileCurve;
        else if (parsed?.targets) {
          resolve({ profile, status: 'not measured', reason: Object.values(parsed.targets)[0]?.detail ?? 'not measured', curve: null });
          return;
        }
      } catch {
        // not the curve after all
      }
      const ended = signal ? `stopped by ${signal}` : code === 0 ? null : `exited with ${code}`;
      if (curve && !curve.error && !ended) resolve({ profile, status: 'measured', reason: null, curve });
      else resolve({ profile, status: 'failed', reason: curve?.error?.split('\n')[0] ?? ended ?? 'printed no curve', curve });
    });
  });
}

export async function runScaleCurve(
  options: ScaleOptions,
  run: { publish: boolean; partial: string[] },
  log: (line: string) => void,
): Promise<void> {
  const startedAt = new Date();
  const loadAtStart = loadavg()[0]!;
  onCleanUp(() => stopAll());
  const steps = stepsUpTo(options.max);
  log(
    `P9 scale curve: ${steps.map((step) => `${step.label} (${step.units} units)`).join(', ')} on ${options.profiles.join(' and ')}; progress below, the curve at the end`,
  );
  const profiles: ProfileOutcome[] = [];
  for (const profile of options.profiles) {
    const server = await profileServer(profile);
    if (server.reason !== null) {
      log(`${profile} profile: NOT MEASURED (${server.reason})`);
      profiles.push({ profile, status: 'not measured', reason: server.reason, curve: null });
      continue;
    }
    if (wasInterrupted()) break;
    log(`${profile} profile on ${shownUrl(server.adminUrl)}`);
    profiles.push(await runProfile(profile, options));
  }
  if (wasInterrupted()) throw new Error('interrupted');
  const finishedAt = new Date();
  const stepsDone = profiles.flatMap((outcome) => outcome.curve?.steps ?? []);
  const growths = stepsDone.map((step) => step.peakFileSystemGrowthBytes).filter((bytes): bytes is number => bytes !== null);
  const report: ScaleReport = {
    kit: 'coldtrack-api bench --scale',
    version: 1,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    max: options.max,
    machine: { ...machineOfRun(loadAtStart), commit: commitMeasured() },
    method: METHOD,
    profiles,
    targets: judgeTargets(profiles, options.max),
    peakDatabaseBytes: Math.max(0, ...stepsDone.map((step) => step.peakDatabaseBytes)),
    peakFileSystemGrowthBytes: growths.length ? Math.max(...growths) : null,
  };
  console.log(formatScaleReport(report));
  const files = writeScaleReport(report, new URL('./results/', import.meta.url));
  console.log(`\nreport: ${files.join('\n        ')}`);
  const failed = profiles.filter((outcome) => outcome.status === 'failed');
  const partial = [...run.partial, ...failed.map((outcome) => `the ${outcome.profile} profile failed`)];
  recordRun(scaleRunRecord(report, partial), { publish: run.publish, now: () => treeState() });
  if (failed.length > 0) process.exitCode = 1;
}
