// `npm run bench -- --scale`: the P9 scale curve, a mode of its own (bench/run.ts starts it; how
// it is built and measured: docs/benchmarks.md). Each storage profile's curve runs in a child
// process (bench/scale-profile.ts), one after the other, so one database exists at a time and the
// two never measure each other. Its line goes to runs.jsonl, and with --publish to the history.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { onCleanUp, stopAll, track, wasInterrupted } from './kit/processes.js';
import { machineOfRun, repoRoot, treeState } from './kit/checkout.js';
import { recordRun } from './kit/publish.js';
import { machineOf } from './kit/run-record.js';
import { type ProfileCurve, type ScaleOptions, stepsUpTo } from './kit/scale-plan.js';
import { formatScaleTable, type ProfileOutcome, scaleRecordOf } from './kit/scale-report.js';
import { profileServer, type SensorProfile, shownUrl } from './kit/sensor-profiles.js';
import { adminUrl } from './kit/throwaway-db.js';

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
  const failed = profiles.filter((outcome) => outcome.status === 'failed');
  const partial = [...run.partial, ...failed.map((outcome) => `the ${outcome.profile} profile failed`)];
  const machine = machineOf(machineOfRun(loadAtStart), null, null);
  const record = scaleRecordOf(profiles, { max: options.max, startedAt, machine, partial });
  console.log(formatScaleTable(record));
  recordRun(record, { publish: run.publish, now: () => treeState() });
  if (failed.length > 0) process.exitCode = 1;
}
