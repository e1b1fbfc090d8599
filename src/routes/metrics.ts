// GET /metrics: Prometheus text, outside the rate limits. In a cluster worker it answers with the
// whole cluster's metrics, collected through the primary (src/cluster.ts).
import type { App } from '../types.js';

/** In a cluster worker: asks the primary for the whole cluster's metrics. */
export type ClusterScrape = () => Promise<{ contentType: string; body: string }>;

export default async function metricsRoute(app: App, options: { clusterScrape?: ClusterScrape | undefined }) {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    if (options.clusterScrape) {
      const { contentType, body } = await options.clusterScrape();
      return reply.type(contentType).send(body);
    }
    return reply.type(app.metrics.registry.contentType).send(await app.metrics.registry.metrics());
  });
}
