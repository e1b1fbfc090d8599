// Webhooks as a service: the endpoints' repository (the management routes) and, where
// WEBHOOK_DELIVERY is on, this process's sender (src/webhooks/dispatcher.ts), started once the app
// is ready and stopped on close after the attempts under way.
import fp from 'fastify-plugin';
import { encodeCursor } from '../sensors/change-cursor.js';
import { cursorKeyReader } from '../sensors/changes.js';
import type { App } from '../types.js';
import { createWebhookDispatcher, type WebhookDispatcher } from '../webhooks/dispatcher.js';
import { createWebhookEndpoints, type WebhookEndpoints } from '../webhooks/endpoints.js';

/** How often the queue's metrics are read. */
const QUEUE_METRICS_MS = 15_000;

declare module 'fastify' {
  interface FastifyInstance {
    webhookEndpoints: WebhookEndpoints;
    /** this process's sender; null with WEBHOOK_DELIVERY=off, or before the app is ready */
    webhookDispatcher: WebhookDispatcher | null;
  }
}

async function webhooks(app: App) {
  const { db, clock, config, metrics } = app;
  const settings = config.webhooks;
  app.decorate('webhookEndpoints', createWebhookEndpoints({ pool: db, clock, allowedNetworks: settings.allowedNetworks }));
  app.decorate('webhookDispatcher', null);
  let queueTimer: NodeJS.Timeout | undefined;

  app.addHook('onReady', async () => {
    if (!settings.deliver) return;
    const cursorKey = cursorKeyReader(db);
    const dispatcher = createWebhookDispatcher({
      pool: db,
      clock,
      log: app.log,
      settings,
      cursorOf: async (companyId, position) => encodeCursor(await cursorKey(), companyId, position),
      observer: {
        attempted(outcome, durationMs) {
          metrics.webhookAttempts.inc({ outcome });
          metrics.webhookAttemptSeconds.observe(durationMs / 1000);
        },
      },
    });
    app.webhookDispatcher = dispatcher;
    const readQueue = () =>
      dispatcher.stats().then(
        (stats) => {
          metrics.webhookPending.set(stats.pending);
          metrics.webhookOldestDueSeconds.set(stats.oldestDueSeconds);
        },
        () => {},
      );
    void readQueue();
    queueTimer = setInterval(() => void readQueue(), QUEUE_METRICS_MS).unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(queueTimer);
    await app.webhookDispatcher?.close();
  });
}

export default fp(webhooks, { name: 'webhooks', dependencies: ['config-pools-clock', 'metrics'] });
