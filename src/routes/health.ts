// Operations endpoints (outside rate limits): liveness and readiness.
import { z } from 'zod';
import type { App } from '../types.js';

const status = z.object({ status: z.string(), checks: z.record(z.string(), z.string()).optional() });

export default async function healthRoutes(app: App) {
  app.get('/healthz', { schema: { summary: 'Process is alive', tags: ['Operations'], response: { 200: status } } }, async () => ({
    status: 'ok',
  }));

  const database = () =>
    app.db
      .query('SELECT 1')
      .then(() => 'ok')
      .catch(() => 'unreachable');
  // the revocation bus reads Redis on every data request and says 'unknown' exactly when Redis
  // can't answer (not connected, or past the command timeout): the same test serves here
  const redis = async () => ((await app.revocations.status('readiness-probe')) === 'unknown' ? 'unreachable' : 'ok');

  app.get(
    '/readyz',
    { schema: { summary: 'Database (and Redis, when configured) reachable', tags: ['Operations'], response: { 200: status, 503: status } } },
    async (_request, reply) => {
      const [databaseCheck, redisCheck] = await Promise.all([database(), app.config.redisUrl ? redis() : null]);
      const checks: Record<string, string> = { database: databaseCheck };
      if (redisCheck) checks.redis = redisCheck;
      const ready = Object.values(checks).every((check) => check === 'ok');
      reply.code(ready ? 200 : 503);
      if (!ready) reply.header('retry-after', '5');
      return { status: ready ? 'ready' : 'unavailable', checks };
    },
  );
}
