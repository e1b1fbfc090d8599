// Process entry: configuration, database (embedded when DATABASE_URL is unset), migrations, the
// app, listening, and a graceful close on signals.
import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './db/embedded.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createRedis, redisReady } from './db/redis.js';
import { demoBanner } from './demo-banner.js';
import { seedDemo } from './seed/demo.js';

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  fail(error instanceof ConfigError ? error.message : String(error));
}

let embedded: EmbeddedDatabase | null = null;
if (!config.databaseUrl) {
  embedded = await startEmbeddedDatabase(config.dataDir, (line) => console.error(line)).catch((error: unknown) =>
    fail(`Could not start the embedded PostgreSQL in ${config.dataDir}: ${String(error)}`),
  );
  config = { ...config, databaseUrl: embedded.url, jwt: config.jwt ?? { kind: 'secret', secret: embedded.jwtSecret } };
}
const databaseUrl = config.databaseUrl!;

await migrate(databaseUrl).catch((error: unknown) => fail(`Could not migrate the database: ${String(error)}`));

const pool = createPool(databaseUrl, config.dbPoolMax);
const redis = config.redisUrl
  ? { client: createRedis(config.redisUrl, 'commands'), subscriber: createRedis(config.redisUrl, 'subscriber') }
  : null;
if (redis && !(await redisReady(redis.client))) {
  console.error(`Redis at REDIS_URL is not reachable yet; starting degraded and reconnecting in the background`);
}
const app = await buildApp({ config, pool, redis });
pool.on('error', (error) => app.log.warn({ err: error }, 'idle database client failed'));

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error');
  else app.log.info({ signal }, 'shutting down');
  await app.close();
  await pool.end();
  redis?.client.disconnect();
  redis?.subscriber.disconnect();
  await embedded?.stop();
});

const address = await app.listen({ host: config.host, port: config.port });

if (embedded) {
  // demo data on first start (idempotent afterwards: it only mints fresh JWTs)
  const jwtSecret = config.jwt!.kind === 'secret' ? config.jwt!.secret : embedded.jwtSecret;
  const summary = await seedDemo(pool, { jwtSecret, jwtIssuer: config.jwtIssuer, jwtAudience: config.jwtAudience });
  const baseUrl = address.replace('://127.0.0.1', '://localhost');
  console.log(demoBanner(baseUrl, summary.companies[0]!));
}
