// Where the sensor-data work plugs into the kit (the one file to finish that wiring in):
// - sensorDataAvailable: the probe deciding whether the HTTP sensor scenarios (raw and hourly
//   1,000-row pages, the deep pagination walk; targets P2 and P3) run or are reported as
//   "not measured: sensor-data not available";
// - loadSensorReadings: the readings those scenarios read (~1 M raw rows), loaded only when the
//   endpoint is there, into the sensor store of migration 003 (partitions prepared first; the
//   TimescaleDB profile's continuous aggregates refreshed after);
// - sensorPaths: the requests of those scenarios;
// - sensorScriptTargets: P4 (hourly from aggregates vs bucketing raw rows) and P6 (ingest with
//   aggregates maintained) as measured by the sensor engineer's bench/sensor-*.ts scripts, run as
//   child processes: a final JSON line is read when they print one, else their PASS/MISS lines.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import type pg from 'pg';
import { WINDOW } from './config.js';
import { adminUrl } from './dataset.js';
import { type HttpAnswer, isStopping, repoRoot, track } from './processes.js';

export const NOT_AVAILABLE = 'not measured: sensor-data not available';

export function sensorDataAvailable(answer: HttpAnswer | Error): { available: boolean; reason: string } {
  if (answer instanceof Error) return { available: false, reason: `${NOT_AVAILABLE} (${answer.message})` };
  if (answer.status === 200) {
    try {
      if (Array.isArray((JSON.parse(answer.body) as { data?: unknown }).data)) return { available: true, reason: '' };
    } catch {
      // not the envelope: a stub
    }
    return { available: false, reason: `${NOT_AVAILABLE} (GET /api/v1/sensor-data answered 200 without the envelope: a stub)` };
  }
  return { available: false, reason: `${NOT_AVAILABLE} (GET /api/v1/sensor-data answered ${answer.status})` };
}

/** The probe's request: a small page that any implementation of the endpoint answers with 200. */
export const SENSOR_PROBE_PATH = `/api/v1/sensor-data?start_date=${WINDOW.first}&end_date=${WINDOW.first}&page_size=1`;

/**
 * One TEMPERATURE and one HUMIDITY reading every 15 minutes over the window for each unit:
 * 366 x 96 x 2 = 70,272 rows a unit (15 units: ~1.05 M). Deterministic values (a daily cycle plus
 * hash noise), like the demo seed's.
 */
export async function loadSensorReadings(pool: pg.Pool, unitIds: number[]): Promise<{ rows: number; seconds: number }> {
  const started = performance.now();
  const from = `${WINDOW.first}T00:00:00Z`;
  const to = new Date(Date.parse(`${WINDOW.last}T00:00:00Z`) + 86_400_000).toISOString();
  // the sensor store (migration 003): weekly partitions (postgres profile) must exist first
  const { rows: functions } = await pool.query<{ prepare: string | null; storage: string | null }>(
    "SELECT to_regproc('sensor_prepare_range')::text AS prepare, to_regclass('sensor_storage')::text AS storage",
  );
  if (functions[0]?.prepare) await pool.query('SELECT * FROM sensor_prepare_range($1, $2)', [from, to]);
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
  // postgres profile: triggers folded the rows into the rollups; timescale: materialize the
  // continuous aggregates now, so hourly pages read aggregates, not the real-time union
  if (functions[0]?.storage) {
    const { rows } = await pool.query<{ profile: string }>('SELECT profile FROM sensor_storage');
    if (rows[0]?.profile === 'timescale') {
      for (const view of ['sensor_readings_hourly', 'sensor_readings_daily']) {
        await pool.query(`CALL refresh_continuous_aggregate('${view}', $1::timestamptz, $2::timestamptz)`, [from, to]);
      }
    }
  }
  await pool.query('ANALYZE sensor_readings');
  return { rows: result.rowCount ?? 0, seconds: (performance.now() - started) / 1000 };
}

const KINDS = 'specification_type=TEMPERATURE,HUMIDITY';

export const sensorPaths = {
  /** 30 days of one unit: 5,760 raw rows, pages 1..5 of 1,000 (P2) */
  rawPage: (unitId: number, page: number) =>
    `/api/v1/sensor-data?cooling_unit_id=${unitId}&start_date=2025-06-01&end_date=2025-06-30&${KINDS}&page_size=1000&page=${page}`,
  /** 365 days of one unit, hourly: 17,520 records, pages 1..17 of 1,000 */
  hourlyPage: (unitId: number, page: number) =>
    `/api/v1/sensor-data?cooling_unit_id=${unitId}&start_date=${WINDOW.first}&end_date=2025-12-31&aggregation=hourly&${KINDS}&page_size=1000&page=${page}`,
  /** every sensor unit, the whole window, raw: ~1 M rows, so page 500 of 1,000 is half-way (P3) */
  deepPage: (page: number) => `/api/v1/sensor-data?start_date=${WINDOW.first}&end_date=${WINDOW.last}&${KINDS}&page_size=1000&page=${page}`,
};

// ---------------------------------------------------------------------------------------------
// P4 and P6 from bench/sensor-*.ts

export type ScriptTarget = 'P4' | 'P6';

export interface ScriptOutcome {
  status: 'pass' | 'miss' | 'not measured';
  /** the figure as the script stated it */
  measured: string;
  ratio: number | null;
  detail: string;
  source: string;
}

/** Which script answers which target, by file name: the lead pins exact names here if needed. */
const SCRIPT_PATTERNS: Record<ScriptTarget, RegExp> = {
  P4: /hourly|aggregate|rollup/i,
  P6: /ingest/i,
};

interface ParsedTarget {
  pass?: boolean;
  status?: string;
  measured?: string | number;
  ratio?: number;
  detail?: string;
}

/** The script's final JSON line ({"P4": {...}} or {"targets": {"P4": {...}}}), else its PASS/MISS lines. */
export function parseScriptOutput(output: string, key: ScriptTarget, source: string): ScriptOutcome | null {
  const lines = output.trim().split('\n');
  const last = lines.at(-1)?.trim() ?? '';
  if (last.startsWith('{')) {
    try {
      const json = JSON.parse(last) as Record<string, unknown> & { targets?: Record<string, ParsedTarget> };
      const entry = (json.targets?.[key] ?? json[key]) as ParsedTarget | undefined;
      if (entry && typeof entry === 'object') {
        const passed = entry.pass ?? (typeof entry.status === 'string' ? /^pass/i.test(entry.status) : undefined);
        return {
          status: passed === undefined ? 'not measured' : passed ? 'pass' : 'miss',
          measured: String(entry.measured ?? entry.ratio ?? ''),
          ratio: typeof entry.ratio === 'number' ? entry.ratio : null,
          detail: entry.detail ?? JSON.stringify(entry),
          source,
        };
      }
    } catch {
      // not JSON after all: read the lines
    }
  }
  const line = lines.find((text) => new RegExp(`\\b${key}\\b`).test(text) && /\b(PASS|MISS|MISSED)\b/.test(text));
  if (!line) return null;
  const ratio = /(\d+(?:\.\d+)?)\s*x\b/.exec(line);
  return {
    status: /\bPASS\b/.test(line) ? 'pass' : 'miss',
    measured: line.trim(),
    ratio: ratio ? Number(ratio[1]) : null,
    detail: line.trim(),
    source,
  };
}

function runScript(file: string, quick: boolean, timeoutMs: number): Promise<{ output: string; error: string | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `bench/${file}`], {
      cwd: repoRoot,
      env: { ...process.env, BENCH_ADMIN_URL: adminUrl(), ...(quick ? { BENCH_QUICK: '1' } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    track(child);
    let output = '';
    let errors = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-2000)));
    // over time: SIGINT first (the scripts drop their databases on it), SIGKILL if that hangs
    let timedOut = false;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, name);
      } catch {
        // gone
      }
    };
    let killer: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      signal('SIGINT');
      killer = setTimeout(() => signal('SIGKILL'), 15_000);
    }, timeoutMs);
    child.on('exit', (code, exitSignal) => {
      clearTimeout(timer);
      clearTimeout(killer);
      if (timedOut) resolve({ output, error: `timed out after ${Math.round(timeoutMs / 1000)} s` });
      else if (code !== 0) resolve({ output, error: `exited with ${exitSignal ?? code}: ${errors.trim().split('\n').at(-1) ?? ''}` });
      else resolve({ output, error: null });
    });
  });
}

export async function sensorScriptTargets(options: {
  quick: boolean;
  /** each script's own limit */
  timeoutMs: number;
  /** Date.now() by which every script must be done (the quick run's budget), or Infinity */
  deadline: number;
  log: (line: string) => void;
}): Promise<Record<ScriptTarget, ScriptOutcome>> {
  const scripts = readdirSync(new URL('../', import.meta.url)).filter((file) => /^sensor-.*\.ts$/.test(file)).sort();
  const outputs = new Map<string, Promise<{ output: string; error: string | null }>>();
  const outcomes = {} as Record<ScriptTarget, ScriptOutcome>;
  for (const key of ['P4', 'P6'] as const) {
    const candidates = scripts.filter((file) => SCRIPT_PATTERNS[key].test(file));
    if (candidates.length === 0) {
      outcomes[key] = { status: 'not measured', measured: '', ratio: null, detail: `not measured: no bench/sensor-*.ts script for ${key} yet`, source: '' };
      continue;
    }
    let found: ScriptOutcome | null = null;
    const problems: string[] = [];
    const timeoutMs = Math.min(options.timeoutMs, options.deadline - Date.now());
    if (isStopping()) {
      outcomes[key] = { status: 'not measured', measured: '', ratio: null, detail: 'not measured: the run was interrupted', source: '' };
      continue;
    }
    if (timeoutMs < 10_000 && !candidates.some((file) => outputs.has(file))) {
      const detail = `not measured: the quick run's time budget is spent (run \`npm run bench\` for ${key})`;
      outcomes[key] = { status: 'not measured', measured: '', ratio: null, detail, source: candidates.join(', ') };
      continue;
    }
    for (const file of candidates) {
      // sequential: two benchmarks at once on 2 cores would measure each other
      if (!outputs.has(file)) {
        options.log(`running bench/${file} for ${key} (limit ${Math.round(timeoutMs / 1000)} s)`);
        outputs.set(file, runScript(file, options.quick, timeoutMs));
      }
      const { output, error } = await outputs.get(file)!;
      found = parseScriptOutput(output, key, `bench/${file}`);
      if (found) break;
      problems.push(`bench/${file} ${error ?? `printed no ${key} line`}`);
    }
    outcomes[key] = found ?? { status: 'not measured', measured: '', ratio: null, detail: `not measured: ${problems.join('; ')}`, source: candidates.join(', ') };
  }
  return outcomes;
}
