// The P14 soak's plan and verdict, pure (the tests feed it made-up series): its options and the
// sample each interval ends with (bench/soak.ts takes them), the verdict, the soak's record (its
// line of runs.jsonl, every sample in it) and the text on stdout rendered from that record
// (--publish renders the docs' soak section from the same record).
import { type CommitFacts, commitMeasured, type MachineOfRun } from './checkout.js';
import { machineOf, RECORD_SHAPE, type SoakRecord } from './run-record.js';
import { median } from './statistics.js';

export interface SoakOptions {
  /** minutes of load after the warm-up; fractions allowed (the tests run a fraction of one) */
  minutes: number;
  /** requests a second of the mixed scenario, over all its connections */
  rate: number;
  profile: 'postgres' | 'timescale';
}

export const SOAK_DEFAULTS = { minutes: 30, rate: 20 } as const;
/** seconds between samples: every sample closes one interval of load */
export const SAMPLE_SECONDS = 10;
/** The window the verdict compares (the first and the last), scaled to the soak: 5 minutes of 30, at least one interval. */
export const verdictWindowMinutes = (minutes: number) => Math.max((minutes * 5) / 30, SAMPLE_SECONDS / 60);

/** What ends each interval (bench/soak.ts reads it as an SRE would, from outside the service). */
export interface ResourceSample {
  workers: { pid: number; rssMb: number | null; fds: number | null }[];
  /** the cluster's event-loop delay over the interval: p99 averaged over the workers, max of any */
  lagP99Ms: number | null;
  lagMaxMs: number | null;
  postgresConnections: number | null;
  redisConnections: number | null;
}

// Windows scale with the soak (5 minutes of 30); memory is judged after the first (start-up, JIT,
// caches filling), latency and connections compare the first window with the last.
//   memory: per worker, the least-squares slope of RSS over time after the first window,
//           as MB per 10 minutes: < 5
//   latency: the last window's p99 <= 1.2x the first's; a window's p99 is the median of its
//           intervals' p99 (one interval's GC pause or neighbour's burst does not decide it)
//   flat: fds per worker, PostgreSQL and Redis connections: the last window's highest at most
//           the first window's highest plus a tolerance (sockets of the load that come and go)
//   errors: no 5xx, no failed management call or ingest
export const P14 = {
  rssGrowthMbPer10Min: 5,
  p99Ratio: 1.2,
  /** how far above the first window's highest the last window's may be and still count as flat */
  tolerance: { fds: 10, postgresConnections: 2, redisConnections: 0 },
} as const;

/** One interval of load ended by one resource sample. */
export interface SoakInterval {
  /** seconds since the load started, at the interval's start and end */
  startS: number;
  atS: number;
  requests: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** responses 500-599 of the load, and failed management calls and ingests in the interval */
  status5xx: number;
  failures: number;
  /** other non-2xx answers of the load (a 429 would say the plan is wrong) */
  otherNon2xx: number;
  sample: ResourceSample;
}

export interface Check {
  id: 'memory' | 'latency' | 'fds' | 'postgres' | 'redis' | 'errors';
  pass: boolean;
  /** the figure in words */
  figure: string;
  value: number | null;
}

export interface SoakVerdict {
  pass: boolean;
  windowMinutes: number;
  checks: Check[];
  /** per worker pid: RSS slope after the first window, MB per 10 minutes */
  rssSlopes: Record<string, number | null>;
}

/** Least-squares slope of y over x; null with fewer than two distinct x. */
export function slope(points: [number, number][]): number | null {
  if (points.length < 2) return null;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return den === 0 ? null : num / den;
}

const known = (values: (number | null)[]) => values.filter((value): value is number => value !== null);
const medianOf = (values: (number | null)[]) => (known(values).length === 0 ? null : median(known(values)));
const max = (values: (number | null)[]) => (known(values).length === 0 ? null : Math.max(...known(values)));

export function judgeSoak(intervals: SoakInterval[], minutes: number): SoakVerdict {
  const windowS = verdictWindowMinutes(minutes) * 60;
  const endS = intervals.at(-1)?.atS ?? 0;
  // an interval belongs to the first window if it started within it, to the last if it ended within it
  const first = intervals.filter((interval) => interval.startS < windowS - 1e-9);
  const last = intervals.filter((interval) => interval.atS > endS - windowS + 1e-9);
  const settled = intervals.filter((interval) => interval.atS > windowS + 1e-9);
  const checks: Check[] = [];

  const pids = [...new Set(intervals.flatMap((interval) => interval.sample.workers.map((worker) => worker.pid)))];
  const rssSlopes: Record<string, number | null> = {};
  for (const pid of pids) {
    const points = settled.flatMap((interval): [number, number][] => {
      const rss = interval.sample.workers.find((worker) => worker.pid === pid)?.rssMb;
      return rss == null ? [] : [[interval.atS / 600, rss]];
    });
    rssSlopes[pid] = slope(points);
  }
  const steepest = max(Object.values(rssSlopes));
  const respawned = pids.length > Math.max(...intervals.map((interval) => interval.sample.workers.length), 0);
  checks.push({
    id: 'memory',
    pass: steepest !== null && steepest < P14.rssGrowthMbPer10Min && !respawned,
    figure:
      steepest === null
        ? 'not enough samples after the first window'
        : `RSS ${steepest >= 0 ? '+' : ''}${steepest.toFixed(2)} MB per 10 min (steepest worker, least squares after ${verdictWindowMinutes(minutes).toFixed(1)} min)` +
          (respawned ? '; a worker was replaced during the soak' : ''),
    value: steepest,
  });

  const firstP99 = medianOf(first.map((interval) => interval.p99Ms));
  const lastP99 = medianOf(last.map((interval) => interval.p99Ms));
  const ratio = firstP99 && lastP99 !== null ? lastP99 / firstP99 : null;
  checks.push({
    id: 'latency',
    pass: ratio !== null && ratio <= P14.p99Ratio,
    figure: ratio === null ? 'no latency in one of the windows' : `p99 last/first ${ratio.toFixed(2)}x (${lastP99} vs ${firstP99} ms)`,
    value: ratio,
  });

  const flat = (id: Check['id'], what: string, of: (sample: ResourceSample) => (number | null)[], tolerance: number) => {
    const before = max(first.flatMap((interval) => of(interval.sample)));
    const after = max(last.flatMap((interval) => of(interval.sample)));
    const growth = before === null || after === null ? null : after - before;
    checks.push({
      id,
      pass: growth !== null && growth <= tolerance,
      figure:
        growth === null ? `${what}: not sampled` : `${what} highest ${before} first, ${after} last (${growth >= 0 ? '+' : ''}${growth})`,
      value: growth,
    });
  };
  // per worker: the sum would hide one worker's leak behind the other's drop
  flat('fds', 'open fds per worker', (s) => s.workers.map((worker) => worker.fds), P14.tolerance.fds);
  flat('postgres', 'PostgreSQL connections', (s) => [s.postgresConnections], P14.tolerance.postgresConnections);
  flat('redis', 'Redis connections', (s) => [s.redisConnections], P14.tolerance.redisConnections);

  const errors = intervals.reduce((sum, interval) => sum + interval.status5xx, 0);
  const failures = intervals.reduce((sum, interval) => sum + interval.failures, 0);
  checks.push({
    id: 'errors',
    pass: errors === 0 && failures === 0,
    figure: `${errors} 5xx, ${failures} failed management calls or ingests`,
    value: errors + failures,
  });
  return { pass: checks.every((check) => check.pass), windowMinutes: verdictWindowMinutes(minutes), checks, rssSlopes };
}

// The report.

export interface SoakReport {
  kind: 'soak';
  startedAt: string;
  durationS: number;
  options: SoakOptions;
  machine: MachineOfRun & { redis: string };
  service: { command: string; workers: number; connections: number };
  dataset: { counts: Record<string, number>; sensorUnits: number };
  intervals: SoakInterval[];
  /** the first failed management calls and ingests, in words */
  failures: string[];
  verdict: SoakVerdict;
}

const GOAL =
  `RSS per worker after the first window grows < ${P14.rssGrowthMbPer10Min} MB per 10 min; p99 of the last window <= ${P14.p99Ratio}x the first; ` +
  'fds, PostgreSQL and Redis connections flat; 0 5xx';

export function soakRunRecord(report: SoakReport, partial: string[], commit: CommitFacts): SoakRecord {
  const round = (value: number | null, digits = 1) => (value === null ? null : Number(value.toFixed(digits)));
  return {
    record: RECORD_SHAPE,
    kind: 'soak',
    date: report.startedAt,
    durationS: report.durationS,
    commit,
    machine: machineOf(report.machine, null, report.machine.redis),
    partial,
    minutes: report.options.minutes,
    rate: report.options.rate,
    profile: report.options.profile,
    service: `${report.service.command}, ${report.service.connections} connections`,
    windowMinutes: report.verdict.windowMinutes,
    targets: [
      {
        id: 'P14',
        verdict: report.verdict.pass ? 'pass' : 'miss',
        figure: report.verdict.checks.map((check) => `${check.pass ? '' : 'MISSED '}${check.figure}`).join('; '),
        value: null,
        detail: GOAL,
      },
    ],
    checks: report.verdict.checks.map((check) => ({ id: check.id, pass: check.pass, figure: check.figure, value: round(check.value, 3) })),
    failures: report.failures,
    series: report.intervals.map((interval) => ({
      atS: interval.atS,
      requests: interval.requests,
      p50Ms: interval.p50Ms,
      p99Ms: interval.p99Ms,
      status5xx: interval.status5xx,
      rssMb: interval.sample.workers.map((worker) => round(worker.rssMb)),
      fds: interval.sample.workers.map((worker) => worker.fds),
      lagP99Ms: round(interval.sample.lagP99Ms, 2),
      postgres: interval.sample.postgresConnections,
      redis: interval.sample.redisConnections,
    })),
  };
}

const value = (v: number | null, digits = 1) => (v === null ? '-' : v.toFixed(digits));

/** The record as text: verdict, checks, then the series (every sample). */
export function soakText(record: SoakRecord): string {
  const { loadAverage, cores } = record.machine;
  const load = loadAverage ? `load ${loadAverage.start.toFixed(1)} -> ${loadAverage.end.toFixed(1)}` : 'load not recorded';
  const target = record.targets[0];
  const lines = [
    `# P14 soak: ${record.minutes} min of the mixed scenario at ${record.rate}/s (${record.profile} profile)`,
    '',
    `${record.date.slice(0, 16)}Z, ${commitMeasured(record.commit)}; ${record.service ?? 'the cluster'}; ${cores} cores, ${load}; ` +
      `windows of ${record.windowMinutes.toFixed(1)} min; ${((record.durationS ?? 0) / 60).toFixed(1)} min in all`,
    '',
    `**P14 ${target?.verdict === 'pass' ? 'PASS' : 'MISSED'}** (${target?.detail ?? GOAL})`,
    '',
    ...record.checks.map((check) => `- ${check.pass ? 'pass' : 'MISSED'} ${check.id}: ${check.figure}`),
    ...(record.failures.length > 0 ? ['', 'failures:', ...record.failures.map((failure) => `- ${failure}`)] : []),
    '',
    '| min | req | p50 ms | p99 ms | RSS MB | fds | lag p99 ms | pg | redis | 5xx |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...record.series.map(
      (point) =>
        `| ${(point.atS / 60).toFixed(1)} | ${point.requests} | ${value(point.p50Ms, 0)} | ${value(point.p99Ms, 0)} | ${point.rssMb.map((v) => value(v, 0)).join(' / ')} | ` +
        `${point.fds.map((v) => v ?? '-').join(' / ')} | ${value(point.lagP99Ms, 1)} | ${point.postgres ?? '-'} | ${point.redis ?? '-'} | ${point.status5xx} |`,
    ),
  ];
  return lines.join('\n');
}
