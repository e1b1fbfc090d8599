// The timescale profile's policy watch (src/sensors/policy-health.ts, src/plugins/sensor-store.ts):
// the sensor policies' state in GET /metrics, and a warning naming the job and its error for each
// new failure. On the real TimescaleDB, with the jobs run by its scheduler: CALL run_job runs a
// job in the caller's session and TimescaleDB records nothing in job_stats or job_errors for it
// (checked below), while the scheduler's runs are what production sees. The template pauses the
// policies (test/helpers/timescale.ts); a job is run by scheduling it now and pausing it again.
// A clone starts with the template's job history (the scheduler may have run, or been cut off
// running, a policy between the migration and the pause): figures are compared with the start.
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import type pg from 'pg';
import { SENSOR_POLICY_JOBS } from '../../src/sensors/policy-health.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTimescaleDatabase } from '../helpers/timescale.js';

type Queryable = Pick<pg.Pool, 'query'>;

interface JobStats {
  total_runs: number;
  /** runs finished, either way: total_runs counts a run from its start */
  finished: number;
  total_failures: number;
  last_run_status: string | null;
  job_status: string | null;
}

const stats = async (db: Queryable, jobId: number) =>
  (
    await db.query<JobStats>(
      `
  SELECT coalesce(total_runs, 0)::int AS total_runs, (coalesce(total_successes, 0) + coalesce(total_failures, 0))::int AS finished,
         coalesce(total_failures, 0)::int AS total_failures, last_run_status, job_status
  FROM timescaledb_information.jobs j LEFT JOIN timescaledb_information.job_stats s USING (job_id) WHERE j.job_id = $1`,
      [jobId],
    )
  ).rows[0]!;

const jobIdOf = async (db: Queryable, proc: string, relation: string) =>
  (
    await db.query<{ job_id: number }>('SELECT job_id FROM timescaledb_information.jobs WHERE proc_name = $1 AND hypertable_name = $2', [
      proc,
      relation,
    ])
  ).rows[0]!.job_id;

const latestError = async (db: Queryable, jobId: number) =>
  (
    await db.query<{ err_message: string }>(
      'SELECT err_message FROM timescaledb_information.job_errors WHERE job_id = $1 ORDER BY finish_time DESC NULLS LAST LIMIT 1',
      [jobId],
    )
  ).rows[0]?.err_message;

/** The mat_hypertable_id a refresh policy's config names: `broken` points it at nothing. */
const setMaterialization = (db: Queryable, jobId: number, view: string, broken: boolean) =>
  db.query(
    `
  UPDATE _timescaledb_catalog.bgw_job SET config = jsonb_set(config, '{mat_hypertable_id}',
    CASE WHEN $3 THEN to_jsonb(987000 + id) ELSE to_jsonb((SELECT mat_hypertable_id FROM _timescaledb_catalog.continuous_agg WHERE user_view_name = $2)) END)
  WHERE id = $1`,
    [jobId, view, broken],
  );

/**
 * One run of a refresh policy by TimescaleDB's scheduler: scheduled a moment from now, waited for,
 * paused again. `broken`: its config names no materialization (987000 + its id) while it runs:
 * alter_job checks the config it is given, so that is written after scheduling, straight into
 * the catalog, and undone after. A run the server could not start (its background-worker slots
 * are shared by every test database's scheduler: "failed to start job"), or that started and
 * ended without a result (counted in total_runs, neither a success nor a failure: a crashed
 * worker, which TimescaleDB reschedules only after a backoff), is tried again.
 */
async function runByScheduler(db: Queryable, jobId: number, view: string, broken = false): Promise<JobStats> {
  // a database cloned from the template has no scheduler until TimescaleDB's launcher polls
  // (every minute): ask for it now (a no-op when it runs)
  await db.query('SELECT _timescaledb_functions.start_background_workers()');
  for (let attempt = 1; ; attempt++) {
    const before = await stats(db, jobId);
    await db.query(`SELECT alter_job($1, scheduled => true, next_start => now() + interval '1 second')`, [jobId]);
    let after: JobStats;
    try {
      if (broken) await setMaterialization(db, jobId, view, true);
      let crashedSince: number | null = null;
      let nudgedAt = Date.now();
      for (const deadline = Date.now() + 90_000; ; await sleep(200)) {
        after = await stats(db, jobId);
        if (after.finished > before.finished && after.last_run_status !== null && after.job_status !== 'Running') break;
        // nothing started yet: this database's scheduler may not be running (it could not get a
        // background-worker slot while other test databases' schedulers held them all: seen once
        // in 90 s of waiting), so ask for it again, and for the run, every 10 s
        if (after.total_runs === before.total_runs && Date.now() - nudgedAt > 10_000) {
          nudgedAt = Date.now();
          await db.query('SELECT _timescaledb_functions.start_background_workers()');
          // alter_job may check the config: the broken one goes in again after
          if (broken) await setMaterialization(db, jobId, view, false);
          await db.query(`SELECT alter_job($1, next_start => now() + interval '1 second')`, [jobId]);
          if (broken) await setMaterialization(db, jobId, view, true);
        }
        const crashed = after.total_runs > before.total_runs && after.finished === before.finished && after.job_status !== 'Running';
        crashedSince = crashed ? (crashedSince ?? Date.now()) : null;
        if (crashedSince !== null && Date.now() - crashedSince > 3000) break;
        if (Date.now() > deadline)
          throw new Error(`TimescaleDB's scheduler did not run job ${jobId} within 90 s (${JSON.stringify(after)})`);
      }
    } finally {
      if (broken) await setMaterialization(db, jobId, view, false);
      await db.query('SELECT alter_job($1, scheduled => false)', [jobId]);
    }
    const crashed = after.finished === before.finished;
    const notStarted = crashed || (after.last_run_status === 'Failed' && /failed to start/.test((await latestError(db, jobId)) ?? ''));
    if (!notStarted) return after;
    if (attempt === 5) throw new Error(`TimescaleDB could not start job ${jobId} in 5 attempts: ${await latestError(db, jobId)}`);
    await sleep(2000);
  }
}

/** The sample of `name{policy="..."}` in GET /metrics, or null when absent. */
async function sample(ctx: TestApp, name: string, job: string): Promise<number | null> {
  const response = await ctx.app.inject({ method: 'GET', url: '/metrics' });
  const line = response.body.split('\n').find((text) => text.startsWith(`${name}{policy="${job}"}`));
  return line === undefined ? null : Number(line.split(' ').at(-1));
}

const warnings = (ctx: TestApp) =>
  ctx.logs
    .map((line) => JSON.parse(line) as { level: number; msg: string; sensorPolicy?: Record<string, unknown> })
    .filter((entry) => entry.level === 40 && entry.sensorPolicy);

async function timescaleApp(t: Test) {
  const db = await createTimescaleDatabase(t);
  const ctx = await createTestApp(t, {}, { database: db });
  await ctx.app.ready();
  return ctx;
}

t.test('the watch runs on the timescale profile only', async (t) => {
  const postgres = await createTestApp(t);
  await postgres.app.ready();
  t.equal(postgres.app.sensorPolicies, null, 'postgres profile: nothing to watch');
  t.equal(await sample(postgres, 'sensor_policy_scheduled', 'refresh_hourly'), null, 'postgres profile: no sensor_policy_* series');

  const ctx = await timescaleApp(t);
  t.ok(ctx.app.sensorPolicies, 'timescale profile: the check is there');
  const { statuses } = await ctx.app.sensorPolicies!.check();
  t.same(
    statuses.map((status) => status.job).sort(),
    ['columnstore_daily', 'columnstore_hourly', 'compress_readings', 'refresh_daily', 'refresh_hourly'],
    'the five sensor policies of a database without retention',
  );
  for (const status of statuses) {
    const { job } = status;
    const recorded = await stats(ctx.db.pool, status.jobId);
    t.equal(await sample(ctx, 'sensor_policy_scheduled', job), 0, `${job}: paused (the test template pauses them), and the metric says so`);
    t.equal(
      await sample(ctx, 'sensor_policy_failures_total', job),
      recorded.total_failures,
      `${job}: the failures TimescaleDB recorded (${recorded.total_failures})`,
    );
    t.equal(
      await sample(ctx, 'sensor_policy_last_run_success', job),
      recorded.last_run_status === null ? null : recorded.last_run_status === 'Success' ? 1 : 0,
      `${job}: its last run (${recorded.last_run_status ?? 'none'})`,
    );
    t.ok((await sample(ctx, 'sensor_policy_last_success_age_seconds', job))! >= 0, `${job}: an age`);
    const {
      rows: [interval],
    } = await ctx.db.pool.query<{ seconds: number }>(
      'SELECT extract(epoch FROM schedule_interval)::float8 AS seconds FROM timescaledb_information.jobs WHERE job_id = $1',
      [status.jobId],
    );
    t.equal(
      await sample(ctx, 'sensor_policy_schedule_interval_seconds', job),
      interval!.seconds,
      `${job}: its schedule interval (${interval!.seconds} s), what the staleness alert measures the age against`,
    );
  }
  t.same(
    SENSOR_POLICY_JOBS.map((policy) => policy.job).filter((job) => !statuses.some((status) => status.job === job)),
    ['retention'],
    'retention only with SENSOR_RETENTION_DAYS',
  );
});

t.test('runs, a forced failure and the recovery show in the metrics; the failure is logged with its error', async (t) => {
  const ctx = await timescaleApp(t);
  const db = ctx.db.pool;
  const check = () => ctx.app.sensorPolicies!.check();
  const hourly = await jobIdOf(db, 'policy_refresh_continuous_aggregate', 'sensor_readings_hourly');
  const compression = await jobIdOf(db, 'policy_compression', 'sensor_readings');
  const atStart = await stats(db, hourly);
  await check();
  const failuresAtStart = (await sample(ctx, 'sensor_policy_failures_total', 'refresh_hourly'))!;
  t.equal(failuresAtStart, atStart.total_failures, 'every recorded failure counted at the first check');
  const dailyAtStart = await sample(ctx, 'sensor_policy_last_run_success', 'refresh_daily');
  // runs the server could not start (no background-worker slot: the test databases' schedulers
  // share them) are real failures the watch rightly logs, but not the ones this test forces
  const hourlyWarnings = () =>
    warnings(ctx).filter((entry) => entry.sensorPolicy!.job === 'refresh_hourly' && !/failed to start/.test(entry.msg));
  t.equal(
    hourlyWarnings().length,
    atStart.last_run_status === 'Failed' ? 1 : 0,
    "the template's history: a warning only if refresh_hourly's last run failed",
  );
  const warnedAtStart = hourlyWarnings().length;

  // CALL run_job leaves no trace in job_stats: the watch sees only the scheduler's runs
  const untouched = await stats(db, compression);
  await db.query('CALL run_job($1)', [compression]);
  t.same(await stats(db, compression), untouched, 'CALL run_job: job_stats unchanged');

  // a run by the scheduler
  const ran = await runByScheduler(db, hourly, 'sensor_readings_hourly');
  t.equal(ran.last_run_status, 'Success', 'the scheduler ran the hourly refresh');
  await check();
  t.equal(await sample(ctx, 'sensor_policy_last_run_success', 'refresh_hourly'), 1, 'sensor_policy_last_run_success 1');
  const age = (await sample(ctx, 'sensor_policy_last_success_age_seconds', 'refresh_hourly'))!;
  t.ok(age >= 0 && age < 60, `sensor_policy_last_success_age_seconds: ${age.toFixed(1)} s`);
  t.equal(
    await sample(ctx, 'sensor_policy_failures_total', 'refresh_hourly'),
    (await stats(db, hourly)).total_failures,
    'the failures TimescaleDB recorded (none new)',
  );
  t.equal(hourlyWarnings().length, warnedAtStart, 'nothing logged');

  // a forced failure: the job's materialization hypertable id pointed at nothing
  const beforeFailure = await stats(db, hourly);
  const failed = await runByScheduler(db, hourly, 'sensor_readings_hourly', true);
  t.equal(failed.last_run_status, 'Failed', 'the scheduler ran it, and it failed');
  const recorded = (await latestError(db, hourly))!;
  t.match(recorded, new RegExp(String(987000 + hourly)), `TimescaleDB recorded the error: "${recorded}"`);
  const newFailures = failed.total_failures - beforeFailure.total_failures;
  const { failures } = await check();
  t.same(
    failures.map((failure) => [failure.job, failure.newFailures, failure.error?.message]),
    [['refresh_hourly', newFailures, recorded]],
    'the check reports the new failure with its error',
  );
  t.equal(await sample(ctx, 'sensor_policy_last_run_success', 'refresh_hourly'), 0, 'sensor_policy_last_run_success 0');
  t.equal(
    await sample(ctx, 'sensor_policy_failures_total', 'refresh_hourly'),
    failed.total_failures,
    `sensor_policy_failures_total: +${newFailures} (1, and any run the server could not start)`,
  );
  t.equal(await sample(ctx, 'sensor_policy_last_run_success', 'refresh_daily'), dailyAtStart, 'the other policies: untouched');
  const logged = hourlyWarnings();
  t.equal(logged.length, warnedAtStart + 1, 'one warning');
  t.equal(
    logged.at(-1)?.msg,
    `sensor policy refresh_hourly (TimescaleDB job ${hourly}) failed${newFailures > 1 ? ` ${newFailures} times` : ''}: ${recorded}`,
    `logged: "${logged.at(-1)?.msg}"`,
  );

  await check();
  t.equal(hourlyWarnings().length, warnedAtStart + 1, 'the same failure is not logged twice');
  t.equal(await sample(ctx, 'sensor_policy_failures_total', 'refresh_hourly'), failed.total_failures, 'nor counted twice');
  t.ok((await sample(ctx, 'sensor_policy_last_success_age_seconds', 'refresh_hourly'))! >= age, 'the last success ages');

  // repaired (runByScheduler put the config back): the next run succeeds
  const repaired = await runByScheduler(db, hourly, 'sensor_readings_hourly');
  t.equal(repaired.last_run_status, 'Success', 'repaired, it runs again');
  await check();
  t.equal(await sample(ctx, 'sensor_policy_last_run_success', 'refresh_hourly'), 1, 'sensor_policy_last_run_success back to 1');
  t.equal(await sample(ctx, 'sensor_policy_failures_total', 'refresh_hourly'), repaired.total_failures, 'the failures stay counted');
  t.ok((await sample(ctx, 'sensor_policy_last_success_age_seconds', 'refresh_hourly'))! < 60, 'a fresh success');
  t.equal(hourlyWarnings().length, warnedAtStart + 1, 'no new warning');
});

t.test('a process starting next to a failed policy reports it at its first check', async (t) => {
  const first = await timescaleApp(t);
  const db = first.db.pool;
  const daily = await jobIdOf(db, 'policy_refresh_continuous_aggregate', 'sensor_readings_daily');
  const failed = await runByScheduler(db, daily, 'sensor_readings_daily', true);
  // a second process of the same deployment: its onReady check finds the failure
  const second = await createTestApp(t, {}, { database: first.db });
  await second.app.ready();
  const { failures } = await second.app.sensorPolicies!.check();
  t.same(failures, [], 'its own check after the start-up one: nothing new');
  t.equal(await sample(second, 'sensor_policy_last_run_success', 'refresh_daily'), 0, 'sensor_policy_last_run_success 0');
  t.equal(await sample(second, 'sensor_policy_failures_total', 'refresh_daily'), failed.total_failures, 'the recorded failures counted');
  t.match(
    warnings(second)
      .filter((entry) => entry.sensorPolicy!.job === 'refresh_daily')
      .map((entry) => entry.msg),
    [
      new RegExp(
        `^sensor policy refresh_daily \\(TimescaleDB job ${daily}\\) is failing: .*${987000 + daily}.* \\(${failed.total_failures} failed runs recorded\\)$`,
      ),
    ],
    'and logged once, with the latest error',
  );

  // repaired and run: a third process counts the failures, and has nothing to warn about
  const repaired = await runByScheduler(db, daily, 'sensor_readings_daily');
  t.equal(repaired.last_run_status, 'Success', 'repaired, it runs again');
  const third = await createTestApp(t, {}, { database: first.db });
  await third.app.ready();
  await third.app.sensorPolicies!.check();
  t.equal(await sample(third, 'sensor_policy_failures_total', 'refresh_daily'), repaired.total_failures, 'the failures still counted');
  t.equal(await sample(third, 'sensor_policy_last_run_success', 'refresh_daily'), 1, 'the last run succeeded');
  t.same(
    warnings(third).filter((entry) => entry.sensorPolicy!.job === 'refresh_daily'),
    [],
    'an old failure since recovered is not logged',
  );
});
