// GET /api/v1/webhook-endpoints/{endpoint_id}: one endpoint of the company (another company's is 404).
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { endpointIdParams, webhookEndpoint } from './schema.js';

export default async function retrieveWebhookEndpoint(app: App) {
  app.get('/:endpoint_id', {
    schema: {
      operationId: 'retrieveWebhookEndpoint',
      summary: 'Retrieve a webhook endpoint',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams,
      response: { 200: webhookEndpoint, ...errorResponses(401, 403, 404, 429, 503) },
    },
    handler: async (request) => app.webhookEndpoints.found(request.employee.companyId, request.params.endpoint_id),
  });
}
