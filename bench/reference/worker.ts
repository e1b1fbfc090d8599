// One worker of the reference cluster: its pool, Redis and Fastify app with the project's error
// envelope, readiness, its own event-loop delay for the benchmark, and the data endpoints.
// Env: DATABASE_URL, REDIS_URL, JWT_SECRET, PORT, HOST (default 127.0.0.1).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Registry } from 'prom-client';
import { sampleEventLoopDelay } from '../../src/observability/event-loop-delay.js';
import { createAccess, type Query } from './access.js';
import { registerAnalyticsRoutes } from './analytics-routes.js';
import { loadProjectSql } from './project-sql.js';
import { createLimit } from './rate-limit.js';
import { Refusal } from './refusal.js';
import { registerSensorRoutes } from './sensor-routes.js';
import { registerTokenRoutes } from './token-routes.js';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`reference server: ${name} is required`);
  return value;
};

export async function serveWorker() {
  const pool = new pg.Pool({
    connectionString: env('DATABASE_URL'),
    max: 10,
    statement_timeout: 30_000,
    options: '-c TimeZone=UTC -c jit=off',
  });
  pool.on('error', () => {}); // idle clients cut when the benchmark drops its database
  const redis = new Redis(env('REDIS_URL'), { enableOfflineQueue: true, maxRetriesPerRequest: 1 });
  const sql = loadProjectSql();
  const access = createAccess(pool, sql, createLimit(redis), env('JWT_SECRET'));

  // the delay as the project measures it (the same sampler: one instrument for both servers),
  // and Node's monitor for the highest single delay
  const loopSampler = sampleEventLoopDelay(new Registry());
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();

  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    if (error instanceof Refusal) return reply.code(error.status).send({ error: { code: error.code, message: error.code } });
    return reply.code(error.statusCode ?? 500).send({ error: { code: 'internal_error', message: String(error.message) } });
  });

  app.get('/readyz', async () => {
    await pool.query('SELECT 1');
    return { status: 'ready' };
  });

  // this worker's event-loop delay since the last reset (the benchmark reads every worker)
  app.get('/__loop', async (request) => {
    const buckets = await loopSampler.buckets();
    const figures = { pid: process.pid, maxMs: loop.max / 1e6, buckets };
    if ((request.query as Query).reset) {
      loop.reset();
      loopSampler.histogram.reset();
    }
    return figures;
  });

  registerAnalyticsRoutes(app, pool, sql, access);
  registerSensorRoutes(app, pool, access);
  registerTokenRoutes(app, pool, sql, access);

  const close = async () => {
    loopSampler.stop();
    await app.close();
    await pool.end();
    redis.disconnect();
    process.exit(0);
  };
  process.on('SIGTERM', () => void close());
  process.on('SIGINT', () => {}); // the primary decides
  await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(env('PORT')) });
}
