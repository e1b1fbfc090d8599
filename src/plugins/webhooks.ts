// Webhooks as a service: the endpoints' repository (the management routes) and, where
// WEBHOOK_DELIVERY is on, this process's sender (src/webhooks/dispatcher.ts), started once the app
// is ready and stopped on close after the attempts under way. Every process, sending or not, reads
// the queue into the webhook_* gauges every QUEUE_METRICS_MS: with no process sending, the oldest
// due delivery's wait still grows on the dashboard and fires the alert (docs/runbooks.md).
import fp from 'fastify-plugin';
import { encodeCursor } from '../sensors/change-cursor.js';
import { cursorKeyReader } from '../sensors/changes.js';
import type { App } from '../types.js';
import { createWebhookDispatcher, readQueueStats, type WebhookDispatcher } from '../webhooks/dispatcher.js';
import { createWebhookEndpoints, type WebhookEndpoints } from '../webhooks/endpoints.js';

/** How often the queue's metrics are read. */
const QUEUE_METRICS_MS = 15_000;

declare module 'fastify' {
  interface FastifyInstance {
    webhookEndpoints: WebhookEndpoints;
    /** this process's sender; null with WEBHOOK_DELIVERY=off, or before the app is ready */
    webhookDispatcher: WebhookDispatcher | null;
    /** reads the queue into the webhook_* gauges now (tests, tools); every QUEUE_METRICS_MS otherwise */
    readWebhookQueue(): Promise<void>;
  }
}

async function webhooks(app: App) {
  const { db, clock, config, metrics } = app;
  const settings = config.webhooks;
  app.decorate('webhookEndpoints', createWebhookEndpoints({ pool: db, clock, allowedNetworks: settings.allowedNetworks }));
  app.decorate('webhookDispatcher', null);
  let queueTimer: NodeJS.Timeout | undefined;
  const readQueue = async () => {
    const stats = await readQueueStats(db, clock.now(), settings.perEndpointInFlight);
    metrics.webhookPending.set(stats.pending);
    metrics.webhookOldestDueSeconds.set(stats.oldestDueSeconds);
  };
  app.decorate('readWebhookQueue', readQueue);

  app.addHook('onReady', async () => {
    // a read that fails keeps the last figures (the database's own alert covers its outage)
    const readQuietly = () => void readQueue().catch(() => {});
    readQuietly();
    queueTimer = setInterval(readQuietly, QUEUE_METRICS_MS).unref();
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
        interrupted(count) {
          metrics.webhookAttempts.inc({ outcome: 'interrupted' }, count);
        },
      },
    });
    app.webhookDispatcher = dispatcher;
  });
  app.addHook('onClose', async () => {
    clearInterval(queueTimer);
    await app.webhookDispatcher?.close();
  });
}

export default fp(webhooks, { name: 'webhooks', dependencies: ['clock', 'config', 'database', 'metrics'] });
