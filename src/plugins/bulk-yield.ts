// Bulk streams yield to the other requests of their process (src/sensors/bulk-yield.ts): every
// request that is not a bulk stream is noted here, and app.bulkYield gates the streams.
import fp from 'fastify-plugin';
import { type BulkYield, createBulkYield } from '../sensors/bulk-yield.js';
import type { App } from '../types.js';

export const BULK_ROUTE = '/api/v1/sensor-data/bulk';

declare module 'fastify' {
  interface FastifyInstance {
    bulkYield: BulkYield;
  }
}

async function bulkYield(app: App) {
  const gate = createBulkYield({ lagMs: app.config.bulkYieldLagMs });
  app.decorate('bulkYield', gate);
  if (app.config.bulkYieldLagMs > 0) {
    // callback style: synchronous work needs no promise per request (src/plugins/http.ts)
    app.addHook('onRequest', (request, _reply, done) => {
      if (request.routeOptions.url !== BULK_ROUTE) gate.noteRequest();
      done();
    });
  }
  app.addHook('onClose', async () => gate.close());
}

export default fp(bulkYield, { name: 'bulk-yield', dependencies: ['config'] });
