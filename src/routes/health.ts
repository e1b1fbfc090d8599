// Operations endpoints (outside rate limits): liveness and readiness.
import { z } from 'zod';
import type { App } from '../types.js';
import { lookup } from '../db/pool.js';
import { redisTarget } from '../redis/connection.js';

const status = z.object({ status: z.string(), checks: z.record(z.string(), z.string()).optional() });

export default async function healthRoutes(app: App) {
  // public, for load balancers and orchestrators: `security: []` says so to the document's readers
  app.get(
    '/healthz',
    { schema: { operationId: 'checkLiveness', summary: 'Process is alive', tags: ['Operations'], security: [], response: { 200: status } } },
    async () => ({ status: 'ok' }),
  );

  const database = (pool: typeof app.db) =>
    lookup(pool, 'SELECT 1', [])
      .then(() => 'ok')
      .catch(() => 'unreachable');
  // the revocation bus's client, with the same short command timeout data requests have
  const redis = async () => ((await app.revocations.reachable()) ? 'ok' : 'unreachable');

  app.get(
    '/readyz',
    {
      schema: {
        operationId: 'checkReadiness',
        summary: 'Database (and Redis, when configured) reachable',
        tags: ['Operations'],
        security: [],
        response: { 200: status, 503: status },
      },
    },
    async (_request, reply) => {
      const hasReplica = app.readDb !== app.db;
      const [databaseCheck, replicaCheck, redisCheck] = await Promise.all([
        database(app.db), hasReplica ? database(app.readDb) : null, redisTarget(app.config) ? redis() : null]);
      const checks: Record<string, string> = { database: databaseCheck };
      if (replicaCheck) checks.read_replica = replicaCheck;
      if (redisCheck) checks.redis = redisCheck;
      const ready = Object.values(checks).every((check) => check === 'ok');
      reply.code(ready ? 200 : 503);
      if (!ready) reply.header('retry-after', '5');
      return { status: ready ? 'ready' : 'unavailable', checks };
    },
  );
}
