// Prometheus metrics of one process (prom-client). In a cluster each worker keeps its own and
// the primary aggregates them on scrape (src/observability/cluster-metrics.ts), so one scrape of
// /metrics on any worker shows the whole cluster.
import type pg from 'pg';
import type { ReplicaState } from '../db/read-routing.js';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

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

  return {
    registry,
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
      help: 'Times the read replica could not be reached and the data endpoints\' reads moved to the primary (once per outage)',
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
    tokenCacheLookups: new Counter({
      name: 'api_token_cache_lookups_total',
      help: 'API-token cache lookups, by result',
      labelNames: ['result'] as const,
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
    // The timescale profile's sensor policies (src/sensors/policy-health.ts, read every minute;
    // absent on the postgres profile). Every worker reads the same database: the cluster shows
    // the worst worker's figure, not a sum.
    sensorPolicyLastRunSuccess: new Gauge({
      name: 'sensor_policy_last_run_success',
      help: 'Sensor policy (TimescaleDB job): 1 if its last scheduled run succeeded, 0 if it failed; absent until it has run',
      labelNames: ['job'] as const,
      aggregator: 'min',
      registers: [registry],
    }),
    sensorPolicyFailures: new Counter({
      name: 'sensor_policy_failures_total',
      help: 'Failed runs of a sensor policy recorded by TimescaleDB (job_stats.total_failures of the current job)',
      labelNames: ['job'] as const,
      aggregator: 'max',
      registers: [registry],
    }),
    sensorPolicyLastSuccessAge: new Gauge({
      name: 'sensor_policy_last_success_age_seconds',
      help: 'Seconds since a sensor policy last succeeded (never: since this process first saw it)',
      labelNames: ['job'] as const,
      aggregator: 'max',
      registers: [registry],
      collect() {
        // aged to the scrape, not to the last check
        for (const [job, age] of policyAges) this.set({ job }, age.seconds + (performance.now() - age.at) / 1000);
      },
    }),
    sensorPolicyScheduled: new Gauge({
      name: 'sensor_policy_scheduled',
      help: 'Sensor policy: 1 if TimescaleDB\'s scheduler runs it, 0 if it is paused (it will never run)',
      labelNames: ['job'] as const,
      aggregator: 'min',
      registers: [registry],
    }),
    /** the age of a policy's last success as of now; null: the policy is gone */
    setSensorPolicyAge(job: string, seconds: number | null) {
      if (seconds === null) {
        policyAges.delete(job);
        this.sensorPolicyLastSuccessAge.remove({ job });
      } else policyAges.set(job, { seconds, at: performance.now() });
    },
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
