// POST /api/v1/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/replay: one delivery sent
// again from its first attempt, whatever its status. Receivers dedupe by webhook-id, which a
// replay keeps.
import { z } from 'zod';
import { emptyBodyIsNoBody } from '../../http/empty-body.js';
import { notFound } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { endpointIdParams } from './schema.js';

export default async function replayWebhookDelivery(app: App) {
  app.addHook('onRequest', emptyBodyIsNoBody);

  app.post('/:endpoint_id/deliveries/:delivery_id/replay', {
    schema: {
      operationId: 'replayWebhookDelivery',
      summary: 'Send one delivery again',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams.extend({ delivery_id: z.string().describe('Delivery id (from the log)') }),
      body: z.strictObject({}).nullish().describe('No body, or an empty JSON object'),
      response: { 202: z.object({ replayed: z.number().int() }), ...errorResponses(400, 401, 403, 404, 415, 429, 503) },
    },
    handler: async (request, reply) => {
      const id = /^[1-9]\d{0,14}$/.test(request.params.delivery_id) ? Number(request.params.delivery_id) : null;
      const replayed =
        id !== null && (await app.webhookEndpoints.replayDelivery(request.employee.companyId, request.params.endpoint_id, id));
      if (!replayed) throw notFound('No delivery with this id for this endpoint');
      return reply.code(202).send({ replayed: 1 });
    },
  });
}
