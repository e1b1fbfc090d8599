// Serving HTTP in this process: a cluster worker, or the whole service when WORKERS is 1. Loaded
// by src/main.ts only in a process that serves, so a cluster primary never loads the app (and a
// worker never loads the migrations or the demo seed): a replaced worker listens sooner.
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import closeWithGrace from 'close-with-grace';
import { AggregatorRegistry } from 'prom-client';
import { buildApp } from './app.js';
import { requestClusterMetrics } from './cluster.js';
import type { Config } from './config.js';
import { createPool } from './db/pool.js';
import { createRedis, redisReady, redisTarget } from './redis/connection.js';
import { lowerThreadPoolPriority } from './thread-pool-priority.js';

/** How long a stopping process lets its kept-alive connections finish one more exchange. */
const DRAIN_MS = 2000;
/** A graceful stop that takes longer exits with code 1 (within the cluster primary's SHUTDOWN_DEADLINE_MS). */
const STOP_DEADLINE_MS = 15_000;
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * The first step of a graceful stop: take no new connection (in a cluster worker the primary
 * then deals them to the other workers), but keep the open ones, and answer every request from
 * now on with Connection: close. A kept-alive connection then ends right after a complete
 * exchange, instead of being cut as "idle" while the client's next request is on its way (what
 * http.Server#close does to idle connections). Resolves when no connection is left, or after
 * DRAIN_MS; app.close() then ends the idle rest and waits for requests in flight.
 */
async function drainConnections(server: Server, ms = DRAIN_MS) {
  server.prependListener('request', (_request, response) => {
    if (!response.headersSent) response.setHeader('connection', 'close');
  });
  // net.Server's close stops accepting and nothing else (http.Server's also drops idle connections)
  net.Server.prototype.close.call(server);
  const openConnections = () => new Promise<number>((resolve) => server.getConnections((_error, count) => resolve(count ?? 0)));
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && (await openConnections()) > 0) await sleep(20);
}

/** Serves HTTP in this process until a signal (or the cluster primary) tells it to stop. */
export async function serve(config: Config, onStopped?: () => Promise<void>) {
  // before the pools: they trace their queries only if tracing is on when they are made. Loaded
  // only when on: with tracing off, no OpenTelemetry module is imported (docs/tracing.md)
  const tracing = config.tracing
    ? await (await import('./tracing/start.js')).startTracing(config.tracing, { trustProxy: config.trustProxy })
    : null;
  const poolOptions = { queryTimeoutMs: config.dbQueryTimeoutMs, preparedStatements: config.dbPreparedStatements, pooler: config.dbPooler };
  const pool = createPool(config.databaseUrl!, config.dbPoolMax, poolOptions);
  // the replica serves the data endpoints' queries; tokens, units and management stay on the primary
  const readPool = config.databaseReadUrl ? createPool(config.databaseReadUrl, config.dbPoolMax, poolOptions) : null;
  const target = redisTarget(config);
  const redis = target ? { client: createRedis(target, 'commands'), subscriber: createRedis(target, 'subscriber') } : null;
  if (redis && !(await redisReady(redis.client))) {
    console.error('Redis is not reachable yet; starting degraded and reconnecting in the background');
  }
  const app = await buildApp({
    config,
    pool,
    readPool,
    redis,
    clusterScrape: cluster.isWorker ? requestClusterMetrics : undefined,
    // the P1 benchmark's comparison only (bench/kit/services.ts): undocumented on purpose, no setting
    countTokenUsage: config.countTokenUsage,
    tracing,
  });
  if (cluster.isWorker) {
    // prom-client only answers the primary's collection requests once an AggregatorRegistry has
    // been constructed in this process (that is what installs its worker-side listener)
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([app.metrics.registry]);
  }
  for (const each of [pool, readPool]) each?.on('error', (error) => app.log.warn({ err: error }, 'idle database client failed'));

  // SIGTERM or SIGINT: stop accepting, let kept-alive connections finish, finish in-flight
  // requests, flush last_used_at and the usage counts (onClose), close pools
  let stopping = false;
  const closer = closeWithGrace({ delay: STOP_DEADLINE_MS, skip: [...STOP_SIGNALS] }, async ({ err }) => {
    stopping = true;
    if (err) app.log.error({ err }, 'shutting down after an error');
    if (app.server.listening) await drainConnections(app.server);
    await app.close();
    await pool.end();
    await readPool?.end();
    redis?.client.disconnect();
    redis?.subscriber.disconnect();
    // the spans still batched are sent before the process exits
    await tracing?.shutdown().catch((error: unknown) => app.log.warn({ err: error }, 'could not send the last spans'));
    await onStopped?.();
  });
  // A stop signal while stopping is not a reason to exit at once, which dropped what the stop had
  // not flushed yet: a terminal's Ctrl-C reaches `npm start`'s service twice (from the terminal, to
  // the whole process group, and from npm, which forwards it), and a cluster worker gets a group's
  // signal and then the primary's SIGTERM. close-with-grace exits on a second signal, and swaps its
  // listeners on the first (between the two, the signal's default action, death, applies): these
  // listeners are never removed. The stop stays bounded by STOP_DEADLINE_MS (and a cluster
  // primary's SIGKILL); SIGKILL stops the process at once.
  for (const stopSignal of STOP_SIGNALS) {
    process.on(stopSignal, (signal: NodeJS.Signals) => {
      if (stopping) {
        app.log.info({ signal }, 'already shutting down: the signal is ignored, the stop goes on');
        return;
      }
      stopping = true;
      app.log.info({ signal }, 'shutting down');
      void closer.close();
    });
  }
  if (config.threadPoolNice > 0) {
    const threads = await lowerThreadPoolPriority(config.threadPoolNice);
    app.log.info({ threads, nice: config.threadPoolNice }, 'thread pool priority lowered');
  }
  return app.listen({ host: config.host, port: config.port });
}
