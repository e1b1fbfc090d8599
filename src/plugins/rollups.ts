// The rollup pool: Piscina threads that turn heavy revenue/impact pages into records off the
// event loop (src/analytics/rollups.ts). Threads start when the server listens.
import fp from 'fastify-plugin';
import { createRollups, type RollupMode, type Rollups } from '../analytics/rollups.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    rollups: Rollups;
  }
}

export interface RollupPluginOptions {
  /** worker threads (default) or inline on the event loop (benchmarks compare the two) */
  mode?: RollupMode | undefined;
}

async function rollups(app: App, options: RollupPluginOptions) {
  const { config } = app;
  // the rollups' queries read pages: on the read replica when there is one (and it answers)
  app.decorate(
    'rollups',
    createRollups({
      mode: options.mode ?? 'pool',
      threads: config.rollupThreads,
      db: app.db,
      reads: app.readRouting,
      heapLimitMb: config.heapLimitMb,
    }),
  );
  // not awaited: a shutdown right after start would otherwise log the interrupted warm-up
  // (inject-only tests start the threads on first use)
  app.addHook('onListen', async () => void app.rollups.warm().catch(() => {}));
  app.addHook('onClose', async () => app.rollups.close());
}

export default fp(rollups, { name: 'rollups', dependencies: ['database'] });
