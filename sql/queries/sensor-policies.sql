-- The timescale profile's sensor policies (TimescaleDB jobs) as its scheduler recorded them, and
-- what tools do with them. $1: the policies' procedures, $2: the relations they act on
-- (src/sensors/policy-health.ts, SENSOR_POLICY_JOBS).

-- name: policyStatus
-- hypertable_name of timescaledb_information.jobs is the aggregate's view name for its policies
SELECT j.job_id, j.proc_name, j.hypertable_name, j.scheduled, extract(epoch FROM j.schedule_interval)::float8 AS schedule_interval,
       s.last_run_status, s.total_runs, s.total_failures,
       -- -infinity until it first succeeds
       CASE WHEN isfinite(s.last_successful_finish) THEN extract(epoch FROM now() - s.last_successful_finish)::float8 END AS success_age,
       extract(epoch FROM now())::float8 AS server_now,
       e.err_message, e.sqlerrcode, e.finish_time::text AS error_at
FROM timescaledb_information.jobs j
LEFT JOIN timescaledb_information.job_stats s ON s.job_id = j.job_id
LEFT JOIN LATERAL (
  SELECT err_message, sqlerrcode, finish_time FROM timescaledb_information.job_errors e
  WHERE e.job_id = j.job_id ORDER BY e.finish_time DESC NULLS LAST LIMIT 1
) e ON true
WHERE j.proc_name = ANY($1::text[]) AND j.hypertable_name = ANY($2::text[])
ORDER BY j.job_id

-- name: pausePolicies
-- the scheduler stops running them; CALL run_job(id) still runs one (benchmarks and tests)
SELECT alter_job(j.job_id, scheduled => false)
FROM timescaledb_information.jobs j
WHERE j.proc_name = ANY($1::text[]) AND j.hypertable_name = ANY($2::text[])

-- name: timescaleSupport
-- whether this server could hold the timescale profile: the extension offered and preloaded
SELECT (SELECT default_version FROM pg_available_extensions WHERE name = 'timescaledb') AS version,
       current_setting('shared_preload_libraries') AS preload
