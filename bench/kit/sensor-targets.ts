// The sensor-data work of `npm run bench`: the probe and readings of the sensor scenarios, and the
// bench/sensor-*.ts scripts on each profile, judged from the JSON line each prints last.
import type pg from 'pg';
import { isStopping, runChild } from './processes.js';
import { WINDOW } from './config.js';
import type { Dataset } from './dataset.js';
import { request } from './load.js';
import { profileServer, SENSOR_PROFILES, type SensorProfile, shownUrl } from './sensor-profiles.js';

/** Probes the project's sensor-data endpoint with a small page and, when it answers, loads the readings the scenarios read. */
export async function probeSensorData(projectUrl: string, dataset: Dataset, log: (line: string) => void) {
  const token = dataset.credentials.alpha.take(1)[0]!.raw;
  const path = `/api/v1/sensor-data?start_date=${WINDOW.first}&end_date=${WINDOW.first}&page_size=1`;
  const probe = await request(projectUrl + path, { headers: { authorization: `Bearer ${token}` } }).then(
    (answer) => (answer.status === 200 ? null : `GET /api/v1/sensor-data answered ${answer.status}`),
    (error: Error) => error.message,
  );
  if (probe !== null) {
    const reason = `not measured: sensor-data not available (${probe})`;
    log(reason);
    return { available: false, reason };
  }
  log(`sensor-data answers: loading 15-minute readings for ${dataset.layout.sensorUnitIds.length} units`);
  const loaded = await loadSensorReadings(dataset.pool, dataset.layout.sensorUnitIds);
  log(`${loaded.rows} readings in ${loaded.seconds.toFixed(1)} s`);
  return { available: true, reason: '' };
}

/** Both types every 15 minutes over the window for each unit (~70 k rows a unit), deterministic values as the demo seed's. */
export async function loadSensorReadings(pool: pg.Pool, unitIds: number[]): Promise<{ rows: number; seconds: number }> {
  const started = performance.now();
  const from = `${WINDOW.first}T00:00:00Z`;
  const to = new Date(Date.parse(`${WINDOW.last}T00:00:00Z`) + 86_400_000).toISOString();
  // postgres profile: the weekly partitions first
  await pool.query('SELECT * FROM sensor_prepare_range($1, $2)', [from, to]);
  const result = await pool.query(
    `INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
     SELECT u, kind, ts,
            CASE WHEN kind = 'TEMPERATURE'
                 THEN round((4 + 1.2 * sin(2 * pi() * extract(epoch FROM ts) / 86400)
                             + ((hashtextextended(u || ':' || extract(epoch FROM ts)::bigint, 1) & 1023) / 1023.0 - 0.5))::numeric, 2)
                 ELSE round((90 + 2.5 * cos(2 * pi() * extract(epoch FROM ts) / 86400))::numeric, 1) END::float8
     FROM unnest($1::int[]) u,
          generate_series($2::timestamptz, $3::timestamptz - interval '15 minutes', interval '15 minutes') ts,
          unnest(ARRAY['TEMPERATURE', 'HUMIDITY']::specification_type[]) kind`,
    [unitIds, from, to],
  );
  // timescale: the aggregates materialized now, so hourly pages read them, not the real-time union
  const { rows } = await pool.query<{ profile: string }>('SELECT profile FROM sensor_storage');
  if (rows[0]?.profile === 'timescale') {
    for (const view of ['sensor_readings_hourly', 'sensor_readings_daily']) {
      await pool.query(`CALL refresh_continuous_aggregate('${view}', $1::timestamptz, $2::timestamptz)`, [from, to]);
    }
  }
  await pool.query('ANALYZE sensor_readings');
  return { rows: result.rowCount ?? 0, seconds: (performance.now() - started) / 1000 };
}

export type ScriptTarget = 'P2' | 'P3' | 'P4' | 'P6' | 'P12' | 'P15';

export interface ScriptOutcome {
  status: 'pass' | 'miss' | 'not measured';
  /** the figure as the script stated it */
  measured: string;
  ratio: number | null;
  detail: string;
  source: string;
}

/** The scripts, in the order they run (the quick run's budget goes to the first ones); what each measures: docs/benchmarks.md. */
export const SENSOR_SCRIPTS: readonly { key: ScriptTarget; file: string; goal: string }[] = [
  { key: 'P4', file: 'sensor-hourly-aggregates.ts', goal: '<= 1.3x the floor; postgres >= 10x raw' },
  { key: 'P6', file: 'sensor-ingest.ts', goal: '>= 0.6x, and >= 100k readings/s' },
  { key: 'P2', file: 'sensor-pages-per-second.ts', goal: '>= 2x' },
  { key: 'P3', file: 'sensor-deep-pages.ts', goal: '<= 1.1x' },
  { key: 'P12', file: 'sensor-changes.ts', goal: '>= 0.95x, and <= 50 ms p50' },
  { key: 'P15', file: 'sensor-bulk-export.ts', goal: '>= 200,000 records/s, and >= 0.5x COPY + gzip' },
];

/** Every script's outcome on each profile, and each profile's server (or why it had none). */
export interface SensorScriptResults {
  profiles: Record<SensorProfile, { server: string | null; reason: string | null }>;
  outcomes: Record<ScriptTarget, Record<SensorProfile, ScriptOutcome>>;
}

const notRun = (detail: string, source = ''): ScriptOutcome => ({ status: 'not measured', measured: '', ratio: null, detail, source });

/** `script` on `profile` in a child process stopped after `timeoutMs`, judged by the JSON line it prints last (sensor-script.ts). */
async function runScript(script: (typeof SENSOR_SCRIPTS)[number], profile: SensorProfile, quick: boolean, timeoutMs: number) {
  const source = `bench/${script.file} --profile ${profile}`;
  // the timescale server's URL is in BENCH_TIMESCALE_URL by now (sensor-profiles.ts)
  const args = ['--import', 'tsx', `bench/${script.file}`, '--profile', profile, ...(quick ? ['--quick'] : [])];
  const child = await runChild(process.execPath, args, { timeoutMs });
  type Entry = { pass?: boolean; measured: string; ratio?: number; detail: string };
  let entry: Entry | undefined;
  try {
    entry = (JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { targets: Partial<Record<string, Entry>> }).targets[script.key];
  } catch {
    // no JSON line: it failed before its report
  }
  if (entry) {
    const status = entry.pass === undefined ? 'not measured' : entry.pass ? 'pass' : 'miss';
    return { status, measured: entry.measured, ratio: entry.ratio ?? null, detail: entry.detail, source } satisfies ScriptOutcome;
  }
  // the last line of its stderr that names an error (Node's version line ends an uncaught one)
  const cause = child.stderr
    .split('\n')
    .map((line) => line.trim())
    .findLast((line) => /error|exception|refused|terminat|ECONN|timeout/i.test(line) && !line.startsWith('at '));
  const error = child.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : child.failure !== null
      ? `exited with ${child.failure}: ${cause ?? ''}`
      : `printed no ${script.key} line`;
  return notRun(`not measured: ${source} ${error}`, source);
}

/** Every script on both profiles, one at a time (two benchmarks at once on 2 cores would measure each other). */
export async function sensorScriptTargets(options: {
  quick: boolean;
  /** each script's own limit */
  timeoutMs: number;
  /** Date.now() by which every script must be done (the quick run's budget), or Infinity */
  deadline: number;
  log: (line: string) => void;
}): Promise<SensorScriptResults> {
  const profiles = {} as SensorScriptResults['profiles'];
  for (const profile of SENSOR_PROFILES) {
    const server = await profileServer(profile);
    profiles[profile] = { server: server.adminUrl && shownUrl(server.adminUrl), reason: server.reason };
    if (server.reason) options.log(`sensor scripts, ${profile} profile: NOT MEASURED (${server.reason})`);
  }
  const outcomes = {} as SensorScriptResults['outcomes'];
  for (const script of SENSOR_SCRIPTS) {
    outcomes[script.key] = {} as Record<SensorProfile, ScriptOutcome>;
    for (const profile of SENSOR_PROFILES) {
      const source = `bench/${script.file} --profile ${profile}`;
      const reason = profiles[profile].reason;
      const timeoutMs = Math.min(options.timeoutMs, options.deadline - Date.now());
      let outcome: ScriptOutcome;
      if (reason) outcome = notRun(`not measured: ${reason}`, source);
      else if (isStopping()) outcome = notRun('not measured: the run was interrupted', source);
      else if (timeoutMs < 10_000)
        outcome = notRun(`not measured: the quick run's time budget is spent (run \`npm run bench\` for ${script.key})`, source);
      else {
        options.log(`running ${source} for ${script.key} (limit ${Math.round(timeoutMs / 1000)} s)`);
        outcome = await runScript(script, profile, options.quick, timeoutMs);
        options.log(`  ${script.key} ${profile}: ${outcome.status}${outcome.measured ? ` ${outcome.measured}` : ` (${outcome.detail})`}`);
      }
      outcomes[script.key][profile] = outcome;
    }
  }
  return { profiles, outcomes };
}

/** A target over both profiles: passed when every profile measured passes; the ratio the worse one; one not measured is named. */
export function combinedOutcome(results: SensorScriptResults, key: ScriptTarget): ScriptOutcome {
  const byProfile = results.outcomes[key];
  const measured = SENSOR_PROFILES.filter((profile) => byProfile[profile].status !== 'not measured');
  const figure = (profile: SensorProfile) => {
    const outcome = byProfile[profile];
    return outcome.status === 'not measured'
      ? `${profile} NOT MEASURED (${outcome.detail.replace(/^not measured: /, '')})`
      : `${profile} ${outcome.status === 'pass' ? 'pass' : 'MISSED'} ${outcome.measured}`;
  };
  if (measured.length === 0) return notRun(SENSOR_PROFILES.map((profile) => `${profile}: ${byProfile[profile].detail}`).join('; '));
  const ratios = measured.map((profile) => byProfile[profile].ratio).filter((ratio): ratio is number => ratio !== null);
  // P3 and the restated P4 (aggregates / floor) are ratios to keep low
  const higherIsBetter = key !== 'P3' && key !== 'P4';
  return {
    status: measured.every((profile) => byProfile[profile].status === 'pass') ? 'pass' : 'miss',
    measured: SENSOR_PROFILES.map(figure).join('; '),
    ratio: ratios.length === 0 ? null : higherIsBetter ? Math.min(...ratios) : Math.max(...ratios),
    detail: SENSOR_PROFILES.map((profile) => `${profile}: ${byProfile[profile].detail}`).join(' | '),
    source: SENSOR_PROFILES.map((profile) => byProfile[profile].source)
      .filter(Boolean)
      .join(', '),
  };
}
