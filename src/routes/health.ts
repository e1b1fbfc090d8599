// Operations endpoints (outside rate limits): liveness and readiness. Readiness is what a load
// balancer acts on, so it is 503 only when this instance cannot serve: the primary unreachable, or
// Redis (when configured: revocation needs it). A lost read replica is "degraded", 200: the data
// endpoints read the primary meanwhile (src/db/read-routing.ts), and a 503 would pull every
// instance from the load balancer at once for something none of them can fix.
import { z } from 'zod';
import type { App } from '../types.js';
import { lookup } from '../db/pool.js';
import { redisTarget } from '../redis/connection.js';

const status = z.object({ status: z.string(), checks: z.record(z.string(), z.string()).optional() });

export default async function healthRoutes(app: App) {
  // public, for load balancers and orchestrators: `security: []` says so to the document's readers
  app.get(
    '/healthz',
    {
      schema: { operationId: 'checkLiveness', summary: 'Process is alive', tags: ['Operations'], security: [], response: { 200: status } },
    },
    async () => ({ status: 'ok' }),
  );

  const database = () =>
    lookup(app.db, 'SELECT 1', [])
      .then(() => 'ok')
      .catch(() => 'unreachable');
  // probing the replica also tells the routing it is back (or lost)
  const replica = async () => ((await app.readRouting.probe()) === 'ok' ? 'ok' : 'unreachable');
  // the revocation bus's client, with the same short command timeout data requests have
  const redis = async () => ((await app.revocations.reachable()) ? 'ok' : 'unreachable');

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'checkReadiness',
        summary: 'Database (and Redis, when configured) reachable; a lost read replica is degraded, not unavailable',
        tags: ['Operations'],
        security: [],
        response: { 200: status, 503: status },
      },
    },
    async (_request, reply) => {
      const hasReplica = app.readRouting.state() !== 'none';
      const [databaseCheck, replicaCheck, redisCheck] = await Promise.all([
        database(),
        hasReplica ? replica() : null,
        redisTarget(app.config) ? redis() : null,
      ]);
      const checks: Record<string, string> = { database: databaseCheck };
      if (replicaCheck) checks.read_replica = replicaCheck;
      if (redisCheck) checks.redis = redisCheck;
      const ready = databaseCheck === 'ok' && (redisCheck ?? 'ok') === 'ok';
      reply.code(ready ? 200 : 503);
      if (!ready) reply.header('retry-after', '5');
      return { status: !ready ? 'unavailable' : replicaCheck === 'unreachable' ? 'degraded' : 'ready', checks };
    },
  );
}
