// docker-compose.yml parses and describes the deployment the service expects: TimescaleDB on
// PostgreSQL 16/17, Redis, and the app built from this folder as a cluster, each with a
// healthcheck, and the app's environment consistent with the database's credentials.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { SHUTDOWN_DEADLINE_MS } from '../../src/cluster.js';
import { loadConfig } from '../../src/config.js';

/** A compose duration ("30s", "1m30s") in milliseconds. */
function durationMs(text: string): number {
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g))
    ms += Number(amount) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
  return ms;
}

interface Service {
  image?: string;
  build?: string | { context: string };
  command?: string[] | string;
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string; interval?: string; timeout?: string; retries?: number; start_period?: string };
  volumes?: string[];
  ports?: string[];
  restart?: string;
  stop_grace_period?: string;
}

const compose = parse(readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8')) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const { db, redis, app } = compose.services;

t.test('three services: db, redis, app', async (t) => {
  t.ok(db && redis && app, 'services db, redis and app');
});

t.test('db: TimescaleDB on PostgreSQL 16 or 17, healthchecked, data on a volume', async (t) => {
  // the release and PostgreSQL major the tests run on (../shared/timescaledb: 2.28.3, PostgreSQL 15)
  t.match(db!.image, /^timescale\/timescaledb:2\.28\.\d+-pg15$/, `image ${db!.image}`);
  t.ok(db!.healthcheck, 'a healthcheck');
  t.match(JSON.stringify(db!.healthcheck!.test), /pg_isready/);
  const volume = db!.volumes?.find((entry) => entry.endsWith(':/var/lib/postgresql/data') || entry.includes('/home/postgres/pgdata'));
  t.ok(volume, 'the data directory is a volume');
  const named = volume?.split(':')[0];
  if (named && !named.startsWith('.') && !named.startsWith('/'))
    t.ok(compose.volumes && named in compose.volumes, `volume ${named} is declared`);
});

t.test('redis: healthchecked', async (t) => {
  t.match(redis!.image, /^redis:/);
  t.match(JSON.stringify(redis!.healthcheck?.test), /redis-cli.*ping/);
});

t.test('app: built from this folder, a cluster, healthchecked on /readyz, after healthy dependencies', async (t) => {
  const context = typeof app!.build === 'string' ? app!.build : app!.build?.context;
  t.equal(context, '.', 'build .');
  const env = Object.fromEntries(Object.entries(app!.environment ?? {}).map(([key, value]) => [key, String(value)]));
  t.ok(Number(env.WORKERS) >= 2, `WORKERS ${env.WORKERS}`);
  t.match(JSON.stringify(app!.healthcheck?.test), /\/readyz/, 'healthcheck on /readyz');
  t.equal(app!.depends_on?.db?.condition, 'service_healthy');
  t.equal(app!.depends_on?.redis?.condition, 'service_healthy');
  t.ok(
    app!.ports?.some((port) => port.endsWith(`:${env.PORT ?? 3000}`)),
    'the service port is published',
  );
  t.equal(env.HOST, '0.0.0.0', 'listens on every interface of the container');
  const grace = durationMs(app!.stop_grace_period ?? '10s');
  t.ok(grace > SHUTDOWN_DEADLINE_MS, `stop_grace_period ${grace} ms exceeds the primary's shutdown deadline (${SHUTDOWN_DEADLINE_MS} ms)`);
  t.ok(durationMs(app!.healthcheck?.timeout ?? '30s') > 3000, 'the healthcheck waits longer than the database connect timeout');
});

t.test("app's environment matches the db and redis services", async (t) => {
  const env = Object.fromEntries(Object.entries(app!.environment ?? {}).map(([key, value]) => [key, String(value)]));
  const database = new URL(env.DATABASE_URL!);
  const dbEnv = Object.fromEntries(Object.entries(db!.environment ?? {}).map(([key, value]) => [key, String(value)]));
  t.equal(database.hostname, 'db', 'DATABASE_URL points at the db service');
  t.equal(database.port || '5432', '5432');
  t.equal(decodeURIComponent(database.username), dbEnv.POSTGRES_USER, 'user');
  t.equal(decodeURIComponent(database.password), dbEnv.POSTGRES_PASSWORD, 'password');
  t.equal(database.pathname.slice(1), dbEnv.POSTGRES_DB, 'database');
  const redisUrl = new URL(env.REDIS_URL!);
  t.equal(redisUrl.hostname, 'redis', 'REDIS_URL points at the redis service');
  t.match(env.JWT_SECRET, /^\$\{JWT_SECRET[:?]/, 'JWT_SECRET comes from the environment of `docker compose`, never a literal');

  // and the service's own config accepts it (with a stand-in secret)
  const config = loadConfig({ ...env, JWT_SECRET: 'x'.repeat(40) });
  t.equal(config.workers, Number(env.WORKERS));
  t.equal(config.redisUrl, env.REDIS_URL);
});
