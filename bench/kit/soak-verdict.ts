// The P14 soak's plan, verdict, record and text, pure (the tests feed it made-up series);
// bench/soak.ts runs the load and takes the samples.
import type { CommitFacts } from './checkout.js';
import { type MachineFacts, recordHead, type SoakRecord } from './run-record.js';
import { median } from './statistics.js';

export interface SoakOptions {
  /** minutes of load after the warm-up; fractions allowed */
  minutes: number;
  /** requests a second of the mixed scenario, over all its connections */
  rate: number;
  profile: 'postgres' | 'timescale';
}

export const SOAK_DEFAULTS = { minutes: 30, rate: 20 } as const;
/** every sample closes one interval of load */
export const SAMPLE_SECONDS = 10;
/** The first and the last window the verdict compares: 5 minutes of 30, at least one interval. */
export const verdictWindowMinutes = (minutes: number) => Math.max((minutes * 5) / 30, SAMPLE_SECONDS / 60);

export interface ResourceSample {
  workers: { pid: number; rssMb: number | null; fds: number | null }[];
  /** the cluster's event-loop delay p99 over the interval, averaged over the workers */
  lagP99Ms: number | null;
  postgresConnections: number | null;
  redisConnections: number | null;
}

/**
 * The steepest worker's RSS slope after the first window; the last window's p99 over the first's (a
 * window's: the median of its intervals', so one GC pause does not decide it); fds and connections,
 * the last window's highest over the first's plus a tolerance; no 5xx or failed call.
 */
export const P14 = {
  rssGrowthMbPer10Min: 5,
  p99Ratio: 1.2,
  tolerance: { fds: 10, postgresConnections: 2, redisConnections: 0 },
} as const;

export interface SoakInterval {
  /** seconds since the load started, at the interval's start and end */
  startS: number;
  atS: number;
  requests: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** 5xx of the load and of the side traffic; failed management calls and ingests */
  status5xx: number;
  failures: number;
  /** other non-2xx answers of the load (a 429 would say the plan is wrong) */
  otherNon2xx: number;
  sample: ResourceSample;
}

type Check = SoakRecord['checks'][number];

/** Least-squares slope of y over x; null with fewer than two distinct x. */
export function slope(points: [number, number][]): number | null {
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const num = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const den = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return points.length < 2 || den === 0 ? null : num / den;
}

const known = (values: (number | null)[]) => values.filter((value): value is number => value !== null);
const medianOf = (values: (number | null)[]) => (known(values).length === 0 ? null : median(known(values)));
const max = (values: (number | null)[]) => (known(values).length === 0 ? null : Math.max(...known(values)));

export function judgeSoak(intervals: SoakInterval[], minutes: number): { pass: boolean; windowMinutes: number; checks: Check[] } {
  const windowMinutes = verdictWindowMinutes(minutes);
  const windowS = windowMinutes * 60;
  const endS = intervals.at(-1)?.atS ?? 0;
  // an interval is in the first window if it started within it, in the last if it ended within it
  const first = intervals.filter((interval) => interval.startS < windowS - 1e-9);
  const last = intervals.filter((interval) => interval.atS > endS - windowS + 1e-9);
  const settled = intervals.filter((interval) => interval.atS > windowS + 1e-9);

  const pids = [...new Set(intervals.flatMap((interval) => interval.sample.workers.map((worker) => worker.pid)))];
  const steepest = max(
    pids.map((pid) =>
      slope(
        settled.flatMap((interval): [number, number][] => {
          const rss = interval.sample.workers.find((worker) => worker.pid === pid)?.rssMb;
          return rss == null ? [] : [[interval.atS / 600, rss]];
        }),
      ),
    ),
  );
  const respawned = pids.length > Math.max(0, ...intervals.map((interval) => interval.sample.workers.length));
  const checks: Check[] = [
    {
      id: 'memory',
      pass: steepest !== null && steepest < P14.rssGrowthMbPer10Min && !respawned,
      figure:
        steepest === null
          ? 'not enough samples after the first window'
          : `RSS ${steepest >= 0 ? '+' : ''}${steepest.toFixed(2)} MB per 10 min (steepest worker, least squares after ${windowMinutes.toFixed(1)} min)` +
            (respawned ? '; a worker was replaced during the soak' : ''),
      value: steepest,
    },
  ];

  const firstP99 = medianOf(first.map((interval) => interval.p99Ms));
  const lastP99 = medianOf(last.map((interval) => interval.p99Ms));
  const ratio = firstP99 && lastP99 !== null ? lastP99 / firstP99 : null;
  checks.push({
    id: 'latency',
    pass: ratio !== null && ratio <= P14.p99Ratio,
    figure: ratio === null ? 'no latency in one of the windows' : `p99 last/first ${ratio.toFixed(2)}x (${lastP99} vs ${firstP99} ms)`,
    value: ratio,
  });

  const flat = (id: string, what: string, of: (sample: ResourceSample) => (number | null)[], tolerance: number) => {
    const before = max(first.flatMap((interval) => of(interval.sample)));
    const after = max(last.flatMap((interval) => of(interval.sample)));
    const growth = before === null || after === null ? null : after - before;
    const figure =
      growth === null ? `${what}: not sampled` : `${what} highest ${before} first, ${after} last (${growth >= 0 ? '+' : ''}${growth})`;
    checks.push({ id, pass: growth !== null && growth <= tolerance, figure, value: growth });
  };
  // per worker: a sum would hide one worker's leak behind the other's drop
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
  return { pass: checks.every((check) => check.pass), windowMinutes, checks };
}

/** What bench/soak.ts hands over. */
export interface SoakRun {
  options: SoakOptions;
  startedAt: Date;
  finishedAt: Date;
  machine: MachineFacts;
  intervals: SoakInterval[];
  /** the first failed management calls and ingests, in words */
  failures: string[];
}

const GOAL =
  `RSS per worker after the first window grows < ${P14.rssGrowthMbPer10Min} MB per 10 min; p99 of the last window <= ${P14.p99Ratio}x the first; ` +
  'fds, PostgreSQL and Redis connections flat; 0 5xx';

/** The soak's record, judged, every sample in it. */
export function soakRecordOf(run: SoakRun, partial: string[], commit?: CommitFacts): SoakRecord {
  const verdict = judgeSoak(run.intervals, run.options.minutes);
  const round = (value: number | null, digits = 1) => (value === null ? null : Number(value.toFixed(digits)));
  return {
    ...recordHead('soak', { ...run, partial, commit }),
    ...run.options,
    windowMinutes: verdict.windowMinutes,
    targets: [
      {
        id: 'P14',
        verdict: verdict.pass ? 'pass' : 'miss',
        figure: verdict.checks.map((check) => `${check.pass ? '' : 'MISSED '}${check.figure}`).join('; '),
        value: null,
        detail: GOAL,
      },
    ],
    checks: verdict.checks.map((check) => ({ ...check, value: round(check.value, 3) })),
    failures: run.failures.slice(0, 50),
    series: run.intervals.map(({ atS, requests, p50Ms, p99Ms, status5xx, sample }) => ({
      atS,
      requests,
      p50Ms,
      p99Ms,
      status5xx,
      rssMb: sample.workers.map((worker) => round(worker.rssMb)),
      fds: sample.workers.map((worker) => worker.fds),
      lagP99Ms: round(sample.lagP99Ms, 2),
      postgres: sample.postgresConnections,
      redis: sample.redisConnections,
    })),
  };
}
