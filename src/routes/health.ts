// Operations endpoints (outside rate limits): liveness and readiness.
import { z } from 'zod';
import type { App } from '../types.js';

const status = z.object({ status: z.string(), checks: z.record(z.string(), z.string()).optional() });

export default async function healthRoutes(app: App) {
  app.get('/healthz', { schema: { summary: 'Process is alive', tags: ['Operations'], response: { 200: status } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/readyz',
    { schema: { summary: 'Database (and Redis, when configured) reachable', tags: ['Operations'], response: { 200: status, 503: status } } },
    async (_request, reply) => {
      const checks: Record<string, string> = {};
      checks.database = await app.db
        .query('SELECT 1')
        .then(() => 'ok')
        .catch(() => 'unreachable');
      const ready = Object.values(checks).every((check) => check === 'ok');
      reply.code(ready ? 200 : 503);
      if (!ready) reply.header('retry-after', '5');
      return { status: ready ? 'ready' : 'unavailable', checks };
    },
  );
}
