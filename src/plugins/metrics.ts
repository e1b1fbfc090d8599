// Request metrics and GET /metrics (Prometheus text, outside the rate limits).
import type { App } from '../types.js';

/** In a cluster worker: asks the primary for the whole cluster's metrics (see src/cluster.ts). */
export type ClusterScrape = () => Promise<{ contentType: string; body: string }>;

export function registerMetrics(app: App, clusterScrape?: ClusterScrape) {
  const { metrics } = app;

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route === '/metrics') return;
    metrics.requestDuration.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    if (clusterScrape) {
      const { contentType, body } = await clusterScrape();
      return reply.type(contentType).send(body);
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
