// The PostgreSQL pools. `db` is the primary; `readDb` serves the data endpoints' page queries: a
// streaming replica when DATABASE_READ_URL names one, the primary while that replica cannot be
// reached (`readRouting`, src/db/read-routing.ts).
// Anything that decides access (tokens, revocation, units) or writes stays on `db`: replica lag
// must never resurrect a revoked token or hide a new one.
import fp from 'fastify-plugin';
import type pg from 'pg';
import { createReadRouting, type ReadRouting } from '../db/read-routing.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: pg.Pool;
    /** the data endpoints' page queries: a replica when configured (the primary while it is lost), else the primary */
    readDb: Pick<pg.Pool, 'query'>;
    readRouting: ReadRouting;
  }
}

export interface DatabaseOptions {
  pool: pg.Pool;
  readPool?: pg.Pool | null | undefined;
}

async function database(app: App, options: DatabaseOptions) {
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
}

export default fp(database, { name: 'database' });
