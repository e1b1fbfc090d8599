// What the P14 soak samples every interval, from outside the service as an SRE would: each
// worker's resident memory and open file descriptors (/proc/<pid>/status and /proc/<pid>/fd),
// the cluster's event-loop lag (its /metrics: prom-client resets its lag histogram on every
// scrape, so each sample covers the interval since the last), the service's PostgreSQL
// connections (pg_stat_activity by application name, the bench database only) and its Redis
// connections (CLIENT LIST by connection name, on a Redis of the soak's own: kit/private-redis.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import pg from 'pg';
import { request } from './load.js';

export interface WorkerSample {
  pid: number;
  rssMb: number | null;
  fds: number | null;
}

export interface ResourceSample {
  workers: WorkerSample[];
  /** the cluster's event-loop delay over the interval: p99 averaged over the workers, max of any */
  lagP99Ms: number | null;
  lagMaxMs: number | null;
  postgresConnections: number | null;
  redisConnections: number | null;
}

function rssOf(pid: number): number | null {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  } catch {
    return null; // exited (a respawn is seen as a new pid)
  }
}

function fdsOf(pid: number): number | null {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return null;
  }
}

/** A Prometheus text sample's value (no labels), or null. */
export function metricValue(text: string, name: string): number | null {
  const match = new RegExp(`^${name} ([^\\s]+)`, 'm').exec(text);
  const value = match ? Number(match[1]) : NaN;
  return Number.isFinite(value) ? value : null;
}

export class ResourceProbes {
  private constructor(
    private readonly serviceUrl: string,
    private readonly workerPids: () => number[],
    private readonly database: { client: pg.Client; name: string },
    private readonly redis: Redis,
  ) {}

  static async open(options: { serviceUrl: string; workerPids: () => number[]; databaseUrl: string; redisUrl: string }) {
    const client = new pg.Client({ connectionString: options.databaseUrl, application_name: 'coldtrack-bench-soak' });
    client.on('error', () => {}); // cut by the forced drop at the end
    await client.connect();
    const redis = new Redis(options.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectionName: 'bench-soak' });
    await redis.connect();
    const name = new URL(options.databaseUrl).pathname.slice(1);
    return new ResourceProbes(options.serviceUrl, options.workerPids, { client, name }, redis);
  }

  async sample(): Promise<ResourceSample> {
    const [metrics, postgres, redis] = await Promise.all([
      request(`${this.serviceUrl}/metrics`, { timeoutMs: 5000 }).then(
        (answer) => (answer.status === 200 ? answer.body : null),
        () => null,
      ),
      this.database.client
        .query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'coldtrack-api%'`,
          [this.database.name],
        )
        .then(
          ({ rows }) => rows[0]!.n,
          () => null,
        ),
      this.redis.client('LIST').then(
        (list) =>
          String(list)
            .split('\n')
            .filter((line) => / name=coldtrack-/.test(line)).length,
        () => null,
      ),
    ]);
    const seconds = (name: string) => {
      const value = metrics === null ? null : metricValue(metrics, name);
      return value === null ? null : value * 1000;
    };
    return {
      workers: this.workerPids().map((pid) => ({ pid, rssMb: rssOf(pid), fds: fdsOf(pid) })),
      lagP99Ms: seconds('nodejs_eventloop_lag_p99_seconds'),
      lagMaxMs: seconds('nodejs_eventloop_lag_max_seconds'),
      postgresConnections: postgres,
      redisConnections: redis,
    };
  }

  async close() {
    await this.database.client.end().catch(() => {});
    this.redis.disconnect();
  }
}
