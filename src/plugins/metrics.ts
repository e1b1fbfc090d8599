// Prometheus metrics of this process (src/observability/metrics.ts) and the request-duration
// hook; GET /metrics itself is src/routes/metrics.ts.
import fp from 'fastify-plugin';
import { createMetrics, type Metrics } from '../observability/metrics.js';
import type { App } from '../types.js';

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Metrics;
  }
}

async function metrics(app: App) {
  // the rollup pool registers after this plugin: its queue is read at scrape time
  app.decorate(
    'metrics',
    createMetrics({
      pool: app.db,
      rollupQueueSize: () => app.rollups.queueSize(),
      replicaState: () => app.readRouting.state(),
    }),
  );
  app.addHook('onClose', () => app.metrics.stop());
  // callback style: synchronous work needs no promise per request (src/plugins/http.ts)
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route !== '/metrics') {
      app.metrics.requestDuration.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    }
    done();
  });
}

export default fp(metrics, { name: 'metrics', dependencies: ['database'] });
