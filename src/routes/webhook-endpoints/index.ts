// /api/v1/webhook-endpoints: a company's webhook endpoints, all behind a Registered Employee's JWT.
import { employeeAuthHook } from '../../plugins/employee-auth.js';
import type { App } from '../../types.js';
import createWebhookEndpoint from './create.js';
import deleteWebhookEndpoint from './delete.js';
import listWebhookDeliveries from './deliveries.js';
import listWebhookEndpoints from './list.js';
import replayWebhookDelivery from './replay-delivery.js';
import replayWebhookEvents from './replay-since.js';
import retrieveWebhookEndpoint from './retrieve.js';
import rotateWebhookSecret from './rotate-secret.js';
import testWebhookEndpoint from './test-event.js';
import updateWebhookEndpoint from './update.js';

export default async function webhookEndpointRoutes(app: App) {
  app.addHook('onRequest', employeeAuthHook(app));
  await app.register(createWebhookEndpoint);
  await app.register(listWebhookEndpoints);
  await app.register(retrieveWebhookEndpoint);
  await app.register(updateWebhookEndpoint);
  await app.register(deleteWebhookEndpoint);
  await app.register(rotateWebhookSecret);
  await app.register(testWebhookEndpoint);
  await app.register(listWebhookDeliveries);
  await app.register(replayWebhookDelivery);
  await app.register(replayWebhookEvents);
}
