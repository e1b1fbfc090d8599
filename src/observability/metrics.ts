// Prometheus metrics of one process (prom-client). In a cluster each worker keeps its own and
// the primary aggregates them on scrape (src/cluster.ts), so one scrape of /metrics on any worker
// shows the whole cluster. The alerting rules and the dashboard built on them are in ops/
// (docs/runbooks.md says what each alert means).
import type pg from 'pg';
import type { ReplicaState } from '../db/read-routing.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Dependency } from '../http/errors.js';
import type { DeliveryOutcome } from '../webhooks/dispatcher.js';
import { sampleEventLoopDelay } from './event-loop-delay.js';

export interface MetricSources {
  pool: pg.Pool;
  rollupQueueSize: () => number;
  /** 'lost': the data endpoints read the primary for want of the read replica */
  replicaState: () => ReplicaState;
}

export function createMetrics(sources: MetricSources) {
  const registry = new Registry();
  /** per sensor policy: seconds since its last success when last checked, and when that was */
  const policyAges = new Map<string, { seconds: number; at: number }>();
  // includes event-loop lag and its percentiles (nodejs_eventloop_lag_p99_seconds)
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  // the same delay as a histogram, which adds up across workers and time (event-loop-delay.ts)
  const eventLoopDelay = sampleEventLoopDelay(registry);

  const unavailableResponses = new Counter({
    name: 'unavailable_responses_total',
    help: 'Responses 503 unavailable, by the dependency that could not answer (database, or redis for a revoke or rotation)',
    labelNames: ['dependency'] as const,
    registers: [registry],
  });
  // both series from the start: an alert's rate() sees the first 503 as an increase from 0
  for (const dependency of ['database', 'redis'] satisfies Dependency[]) unavailableResponses.inc({ dependency }, 0);
  const tokenCacheLookups = new Counter({
    name: 'api_token_cache_lookups_total',
    help: 'API-token cache lookups, by result',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  // hits and misses from the start: the dashboard's hit ratio has both sides
  for (const result of ['hit', 'miss']) tokenCacheLookups.inc({ result }, 0);
  const tokenLeakReports = new Counter({
    name: 'token_leak_reports_total',
    help: 'Tokens listed by signed leak reports, by the answer: true_positive (a token of this service) or false_positive',
    labelNames: ['label'] as const,
    registers: [registry],
  });
  // both answers from the start at 0: increase() sees the first report too
  for (const label of ['true_positive', 'false_positive']) tokenLeakReports.inc({ label }, 0);
  const webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, to be tried again), failed (out of retries) or interrupted (the sending process stopped before the answer was recorded; counted when the delivery is claimed again)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  // every outcome from the start at 0: the alert's increase() sees the first failed delivery too
  for (const outcome of ['succeeded', 'retrying', 'failed', 'interrupted'] satisfies (DeliveryOutcome | 'interrupted')[])
    webhookAttempts.inc({ outcome }, 0);

  return {
    registry,
    /** stops the event-loop sampler's timer (the app's onClose) */
    stop: () => eventLoopDelay.stop(),
    unavailableResponses,
    requestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    rateLimitRejections: new Counter({
      name: 'rate_limit_rejections_total',
      help: 'Requests refused with 429, by rate-limit scope',
      labelNames: ['scope'] as const,
      registers: [registry],
    }),
    rateLimitFallbacks: new Counter({
      name: 'rate_limit_redis_fallbacks_total',
      help: 'Redis outages in which rate limits fell back to per-process counting (one per outage, however its commands flap)',
      registers: [registry],
    }),
    readReplicaFallbacks: new Counter({
      name: 'db_read_replica_fallbacks_total',
      help: "Times the read replica could not be reached and the data endpoints' reads moved to the primary (once per outage)",
      registers: [registry],
    }),
    readReplicaLost: new Gauge({
      name: 'db_read_replica_lost',
      help: 'Processes whose data endpoints read the primary because the read replica cannot be reached',
      registers: [registry],
      collect() {
        this.set(sources.replicaState() === 'lost' ? 1 : 0);
      },
    }),
    // set when the store falls back and cleared once Redis has answered for REDIS_BACK_AFTER_MS
    // with no failure (redis/outage.ts): the state as of this process's last rate-limited
    // request. Summed: how many workers count alone.
    rateLimitFallbackActive: new Gauge({
      name: 'rate_limit_redis_fallback_active',
      help: 'Rate limits counted per process because Redis does not answer: 1 while this process does (cluster: how many workers do)',
      registers: [registry],
    }),
    lastUsedFlushFailures: new Counter({
      name: 'last_used_flush_failures_total',
      help: "Failed writes of API tokens' last_used_at (src/tokens/last-used.ts); the entries are kept for the next flush",
      registers: [registry],
    }),
    tokenUsageFlushFailures: new Counter({
      name: 'token_usage_flush_failures_total',
      help: 'Failed writes of the usage per API token (src/tokens/usage.ts); the counts are kept for the next flush',
      registers: [registry],
    }),
    tokenCacheLookups,
    // leak reports (POST /api/v1/token-leaks): every reported token by its answer, and the live
    // ones revoked because of it; a revoked leak means a partner's integration now gets 401s
    tokenLeakReports,
    leakedTokensRevoked: new Counter({
      name: 'leaked_tokens_revoked_total',
      help: 'Live API tokens revoked because a signed leak report listed them (each once, however often reported)',
      registers: [registry],
    }),
    // sampled when scraped (also when the cluster primary collects from every worker)
    dbPool: new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        this.set({ state: 'total' }, sources.pool.totalCount);
        this.set({ state: 'idle' }, sources.pool.idleCount);
        this.set({ state: 'waiting' }, sources.pool.waitingCount);
      },
    }),
    dbPoolMax: new Gauge({
      name: 'db_pool_max_connections',
      help: 'PostgreSQL pool size limit (DB_POOL_MAX); cluster: the sum over the workers',
      registers: [registry],
      collect() {
        this.set(sources.pool.options.max ?? 10);
      },
    }),
    // The timescale profile's sensor policies (src/sensors/policy-health.ts, read every minute;
    // absent on the postgres profile). Every worker reads the same database: the cluster shows
    // the worst worker's figure, not a sum. The label is `policy`, not `job`: Prometheus gives
    // every scraped series its target's `job` (and would rename ours `exported_job`).
    sensorPolicyLastRunSuccess: new Gauge({
      name: 'sensor_policy_last_run_success',
      help: 'Sensor policy (TimescaleDB job): 1 if its last scheduled run succeeded, 0 if it failed; absent until it has run',
      labelNames: ['policy'] as const,
      aggregator: 'min',
      registers: [registry],
    }),
    sensorPolicyFailures: new Counter({
      name: 'sensor_policy_failures_total',
      help: 'Failed runs of a sensor policy recorded by TimescaleDB (job_stats.total_failures of the current job)',
      labelNames: ['policy'] as const,
      aggregator: 'max',
      registers: [registry],
    }),
    sensorPolicyLastSuccessAge: new Gauge({
      name: 'sensor_policy_last_success_age_seconds',
      help: 'Seconds since a sensor policy last succeeded (never: since this process first saw it)',
      labelNames: ['policy'] as const,
      aggregator: 'max',
      registers: [registry],
      collect() {
        // aged to the scrape, not to the last check
        for (const [policy, age] of policyAges) this.set({ policy }, age.seconds + (performance.now() - age.at) / 1000);
      },
    }),
    sensorPolicyScheduled: new Gauge({
      name: 'sensor_policy_scheduled',
      help: "Sensor policy: 1 if TimescaleDB's scheduler runs it, 0 if it is paused (it will never run)",
      labelNames: ['policy'] as const,
      aggregator: 'min',
      registers: [registry],
    }),
    sensorPolicyScheduleInterval: new Gauge({
      name: 'sensor_policy_schedule_interval_seconds',
      help: "Sensor policy: how often TimescaleDB's scheduler runs it (its staleness is measured against this)",
      labelNames: ['policy'] as const,
      aggregator: 'max',
      registers: [registry],
    }),
    /** the age of a policy's last success as of now; null: the policy is gone */
    setSensorPolicyAge(policy: string, seconds: number | null) {
      if (seconds === null) {
        policyAges.delete(policy);
        this.sensorPolicyLastSuccessAge.remove({ policy });
      } else policyAges.set(policy, { seconds, at: performance.now() });
    },
    // webhooks (src/webhooks/dispatcher.ts): every attempt by its outcome, and the queue as this
    // process last read it (every process reads it, sending or not, from the same database: the
    // cluster shows the worst)
    webhookAttempts,
    webhookAttemptSeconds: new Histogram({
      name: 'webhook_delivery_attempt_duration_seconds',
      help: 'Time of a webhook delivery attempt, from the request to the answer (or the failure)',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    webhookPending: new Gauge({
      name: 'webhook_deliveries_pending',
      help: 'Webhook deliveries not yet delivered nor failed (due now or waiting for a retry)',
      aggregator: 'max',
      registers: [registry],
    }),
    webhookOldestDueSeconds: new Gauge({
      name: 'webhook_oldest_due_delivery_age_seconds',
      help: 'How long the oldest delivery a process could send now has waited (0: none waits); not those waiting on their endpoint (disabled, at its in-flight limit, or an earlier delivery of the token still pending)',
      aggregator: 'max',
      registers: [registry],
    }),
    rollupQueue: new Gauge({
      name: 'rollup_queue_depth',
      help: 'Revenue/impact rollup tasks waiting for a Piscina worker thread',
      registers: [registry],
      collect() {
        this.set(sources.rollupQueueSize());
      },
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
