// DELETE /api/v1/webhook-endpoints/{endpoint_id}: the endpoint and its delivery log are removed;
// nothing more is sent to it.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { endpointIdParams } from './schema.js';

export default async function deleteWebhookEndpoint(app: App) {
  app.delete('/:endpoint_id', {
    schema: {
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams,
      response: { 204: z.null().describe('Deleted: no body'), ...errorResponses(401, 403, 404, 429, 503) },
    },
    handler: async (request, reply) => {
      await app.webhookEndpoints.remove(request.employee.companyId, request.params.endpoint_id, employeeOrigin(request));
      return reply.code(204).send(null);
    },
  });
}
