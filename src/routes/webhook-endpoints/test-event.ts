// POST /api/v1/webhook-endpoints/{endpoint_id}/test: a webhook.test event for this endpoint alone,
// delivered like any other (signed, retried, in its log): what a receiver is checked with.
import { z } from 'zod';
import { emptyBodyIsNoBody } from '../../http/empty-body.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { endpointIdParams } from './schema.js';

export default async function testWebhookEndpoint(app: App) {
  app.addHook('onRequest', emptyBodyIsNoBody);

  app.post('/:endpoint_id/test', {
    schema: {
      operationId: 'testWebhookEndpoint',
      summary: 'Send a test event to a webhook endpoint',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams,
      body: z.strictObject({}).nullish().describe('No body, or an empty JSON object'),
      response: {
        202: z.object({ message_id: z.string().describe('The webhook-id the delivery carries; find it in the delivery log') }),
        ...errorResponses(400, 401, 403, 404, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const sent = await app.webhookEndpoints.sendTest(request.employee.companyId, request.params.endpoint_id, request.employee.userId);
      return reply.code(202).send(sent);
    },
  });
}
