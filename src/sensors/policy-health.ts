// Health of the timescale profile's sensor policies. TimescaleDB runs them (aggregate refresh,
// columnstore/compression, retention) in background workers, and a failing one fails silently:
// the API keeps answering (real-time aggregation covers what the refresh missed, more and more
// slowly), chunks stay uncompressed, old readings are never dropped. On PostgreSQL 15.20 an
// unpatched TimescaleDB failed every job this way. So each process reads the jobs' state from
// timescaledb_information.jobs / job_stats / job_errors (src/plugins/sensor-store.ts, every
// minute) into Prometheus metrics and logs a warning, with the job's error, for each new failure.
//
// What is read is what TimescaleDB's scheduler records: CALL run_job(id) runs a job in the
// caller's session and leaves job_stats and job_errors as they were.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import type { Metrics } from '../observability/metrics.js';

type Queryable = Pick<pg.Pool, 'query'>;

/** The sensor policies, by procedure and the relation they act on: the `policy` label of the metrics. */
export const SENSOR_POLICY_JOBS: readonly { job: string; proc: string; relation: string }[] = [
  { job: 'refresh_hourly', proc: 'policy_refresh_continuous_aggregate', relation: 'sensor_readings_hourly' },
  { job: 'refresh_daily', proc: 'policy_refresh_continuous_aggregate', relation: 'sensor_readings_daily' },
  { job: 'compress_readings', proc: 'policy_compression', relation: 'sensor_readings' },
  { job: 'columnstore_hourly', proc: 'policy_compression', relation: 'sensor_readings_hourly' },
  { job: 'columnstore_daily', proc: 'policy_compression', relation: 'sensor_readings_daily' },
  { job: 'retention', proc: 'policy_retention', relation: 'sensor_readings' },
];

export interface PolicyStatus {
  /** the metrics' `policy` label (SENSOR_POLICY_JOBS) */
  job: string;
  jobId: number;
  scheduled: boolean;
  /** how often the scheduler runs it, seconds */
  scheduleIntervalSeconds: number;
  /** null: the scheduler has not run it yet, or a run is under way (TimescaleDB clears it at each start) */
  lastRunSucceeded: boolean | null;
  /** seconds since its last successful run by the server's clock; null: never succeeded */
  lastSuccessAgeSeconds: number | null;
  totalRuns: number;
  totalFailures: number;
  /** the most recent failure TimescaleDB recorded for it (job_errors), if any */
  lastError: { message: string; sqlerrcode: string | null; at: string | null } | null;
  /** the server's clock, epoch seconds, when read */
  serverNow: number;
}

const sql = loadQueries('sensor-policies', ['policyStatus', 'pausePolicies', 'timescaleSupport']);

/** [procedures, relations]: the parameters that pick the sensor policies out of every job. */
const POLICY_PARAMETERS = [
  [...new Set(SENSOR_POLICY_JOBS.map((policy) => policy.proc))],
  [...new Set(SENSOR_POLICY_JOBS.map((policy) => policy.relation))],
];

interface StatusRow {
  job_id: number;
  proc_name: string;
  hypertable_name: string;
  scheduled: boolean;
  schedule_interval: number;
  last_run_status: string | null;
  total_runs: string | null;
  total_failures: string | null;
  success_age: number | null;
  server_now: number;
  err_message: string | null;
  sqlerrcode: string | null;
  error_at: string | null;
}

/** The sensor policies' state as TimescaleDB's scheduler recorded it. */
export async function readPolicyStatus(db: Queryable): Promise<PolicyStatus[]> {
  const { rows } = await db.query<StatusRow>(sql.policyStatus, POLICY_PARAMETERS);
  const statuses: PolicyStatus[] = [];
  for (const row of rows) {
    const policy = SENSOR_POLICY_JOBS.find((candidate) => candidate.proc === row.proc_name && candidate.relation === row.hypertable_name);
    if (!policy) continue;
    statuses.push({
      job: policy.job,
      jobId: row.job_id,
      scheduled: row.scheduled,
      scheduleIntervalSeconds: row.schedule_interval,
      lastRunSucceeded: row.last_run_status === 'Success' ? true : row.last_run_status === 'Failed' ? false : null,
      lastSuccessAgeSeconds: row.success_age,
      totalRuns: Number(row.total_runs ?? 0),
      totalFailures: Number(row.total_failures ?? 0),
      lastError: row.err_message === null ? null : { message: row.err_message, sqlerrcode: row.sqlerrcode, at: row.error_at },
      serverNow: row.server_now,
    });
  }
  return statuses;
}

/**
 * Stops TimescaleDB's scheduler from running the sensor policies by itself (CALL run_job still
 * runs them): benchmarks and tests run them at the moments they choose. Answers how many.
 */
export async function pauseSensorPolicies(db: Queryable): Promise<number> {
  return (await db.query(sql.pausePolicies, POLICY_PARAMETERS)).rowCount ?? 0;
}

/**
 * Why the server `db` is connected to cannot hold the timescale profile (the extension not
 * offered, or not preloaded), or null when it can: what migration 003 checks before choosing it.
 */
export async function timescaleUnsupported(db: Queryable): Promise<string | null> {
  const { rows } = await db.query<{ version: string | null; preload: string }>(sql.timescaleSupport);
  if (!rows[0]!.version) return 'answers, but does not offer the timescaledb extension';
  if (!/timescaledb/.test(rows[0]!.preload))
    return `answers, but does not preload timescaledb (shared_preload_libraries = '${rows[0]!.preload}')`;
  return null;
}

export interface PolicyFailure {
  job: string;
  jobId: number;
  /** failures since the previous check (at a process's first check: all those recorded) */
  newFailures: number;
  totalFailures: number;
  error: PolicyStatus['lastError'];
}

interface Logger {
  warn(details: object, message: string): void;
}

/**
 * The check behind the metrics: each call reads the policies' state, sets the gauges, counts the
 * failures recorded since the previous call and logs one warning per policy that has new ones.
 * A process's first check counts every failure recorded so far (the counter's series appears
 * then, at its total, so a restart reads as no increase) and warns only about a policy whose last
 * run failed: old failures since recovered are not news.
 */
export function createPolicyHealth(options: { db: Queryable; metrics: Metrics; log: Logger }) {
  const { db, metrics, log } = options;
  /** per job id: failures already counted */
  const counted = new Map<number, number>();
  /** per job id: when this process first saw it (server clock), for a policy that never succeeded */
  const firstSeen = new Map<number, number>();
  let labels = new Set<string>();
  /** checks run one after the other: an older reading must never overwrite a newer one's counts */
  let last: Promise<unknown> = Promise.resolve();

  async function run(): Promise<{ statuses: PolicyStatus[]; failures: PolicyFailure[] }> {
    const statuses = await readPolicyStatus(db);
    const failures: PolicyFailure[] = [];
    const present = new Set<string>();
    for (const status of statuses) {
      const { job } = status;
      present.add(job);
      metrics.sensorPolicyScheduled.set({ policy: job }, status.scheduled ? 1 : 0);
      metrics.sensorPolicyScheduleInterval.set({ policy: job }, status.scheduleIntervalSeconds);
      // while a run is under way the previous verdict stands
      if (status.lastRunSucceeded !== null) metrics.sensorPolicyLastRunSuccess.set({ policy: job }, status.lastRunSucceeded ? 1 : 0);
      else if (status.totalRuns === 0) metrics.sensorPolicyLastRunSuccess.remove({ policy: job });
      if (!firstSeen.has(status.jobId)) firstSeen.set(status.jobId, status.serverNow);
      metrics.setSensorPolicyAge(job, status.lastSuccessAgeSeconds ?? status.serverNow - firstSeen.get(status.jobId)!);

      const firstSight = !counted.has(status.jobId);
      const fresh = status.totalFailures - (counted.get(status.jobId) ?? 0);
      metrics.sensorPolicyFailures.inc({ policy: job }, Math.max(fresh, 0));
      counted.set(status.jobId, status.totalFailures);
      const error = status.lastError?.message ?? 'no error recorded';
      const failure = { job, jobId: status.jobId, newFailures: fresh, totalFailures: status.totalFailures, error: status.lastError };
      if (firstSight ? status.lastRunSucceeded === false : fresh > 0) {
        failures.push(failure);
        log.warn(
          { sensorPolicy: failure },
          firstSight
            ? `sensor policy ${job} (TimescaleDB job ${status.jobId}) is failing: ${error} (${status.totalFailures} failed runs recorded)`
            : `sensor policy ${job} (TimescaleDB job ${status.jobId}) failed${fresh > 1 ? ` ${fresh} times` : ''}: ${error}`,
        );
      }
    }
    // a policy removed since (retention switched off): its series go
    for (const job of labels) {
      if (present.has(job)) continue;
      metrics.sensorPolicyScheduled.remove({ policy: job });
      metrics.sensorPolicyScheduleInterval.remove({ policy: job });
      metrics.sensorPolicyLastRunSuccess.remove({ policy: job });
      metrics.setSensorPolicyAge(job, null);
    }
    labels = present;
    return { statuses, failures };
  }

  return {
    check(): Promise<{ statuses: PolicyStatus[]; failures: PolicyFailure[] }> {
      const next = last.then(run, run);
      last = next.catch(() => {});
      return next;
    },
  };
}

export type PolicyHealth = ReturnType<typeof createPolicyHealth>;
