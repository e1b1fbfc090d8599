// What every other plugin and route reads: the validated configuration, the PostgreSQL pools and
// the clock (injected, so tests move time instead of sleeping). `db` is the primary; `readDb`
// serves the data endpoints' page queries: a streaming replica when DATABASE_READ_URL names one,
// the primary while that replica cannot be reached (`readRouting`, src/db/read-routing.ts).
// Anything that decides access (tokens, revocation, units) or writes stays on `db`: replica lag
// must never resurrect a revoked token or hide a new one.
import fp from 'fastify-plugin';
import type pg from 'pg';
import type { Config } from '../config.js';
import { createReadRouting } from '../db/read-routing.js';
import { type Clock, systemClock } from '../time.js';
import type { App } from '../types.js';

export interface ConfigPoolsClockOptions {
  config: Config;
  pool: pg.Pool;
  readPool?: pg.Pool | null | undefined;
  clock?: Clock | undefined;
}

async function configPoolsClock(app: App, options: ConfigPoolsClockOptions) {
  app.decorate('config', options.config);
  app.decorate('db', options.pool);
  const readRouting = createReadRouting(options.pool, options.readPool ?? null, {
    onReplicaLost: (error) => {
      app.metrics?.readReplicaFallbacks.inc();
      app.log.error({ err: error }, 'read replica unreachable: data reads go to the primary until it answers again');
    },
    onReplicaBack: () => app.log.warn('read replica answers again: data reads go back to it'),
  });
  app.decorate('readRouting', readRouting);
  app.decorate('readDb', { query: readRouting.query });
  app.addHook('onClose', async () => readRouting.close());
  app.decorate('clock', options.clock ?? systemClock);
}

export default fp(configPoolsClock, { name: 'config-pools-clock' });
