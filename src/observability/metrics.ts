// Prometheus metrics of one process (prom-client). In a cluster each worker keeps its own and
// the primary aggregates them on scrape (src/observability/cluster-metrics.ts), so one scrape of
// /metrics on any worker shows the whole cluster.
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface MetricSources {
  pool: pg.Pool;
  rollupQueueSize: () => number;
}

export function createMetrics(sources: MetricSources) {
  const registry = new Registry();
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
      help: 'Times Redis stopped answering and rate limits fell back to per-process counting',
      registers: [registry],
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
