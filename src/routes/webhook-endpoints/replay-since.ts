// POST /api/v1/webhook-endpoints/{endpoint_id}/replay {"since"}: every event since then that the
// endpoint wants sent again (also those written while it was disabled), each from its first
// attempt. Receivers dedupe by webhook-id, which a replay keeps.
import { z } from 'zod';
import { invalidRequest } from '../../http/errors.js';
import { errorResponses, isoInstant } from '../../http/schemas.js';
import { requireJsonBody } from '../../http/strict-json.js';
import { DAY_MS } from '../../time.js';
import { EVENTS_KEPT_MS } from '../../webhooks/dispatcher.js';
import type { App } from '../../types.js';
import { endpointIdParams } from './schema.js';

/** How far back a replay may reach: the events kept (docs/webhooks.md). */
const REPLAY_DAYS = EVENTS_KEPT_MS / DAY_MS;

export default async function replayWebhookEvents(app: App) {
  app.post('/:endpoint_id/replay', {
    preParsing: requireJsonBody,
    schema: {
      operationId: 'replayWebhookEvents',
      summary: 'Send every event since a time again',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams,
      body: z.strictObject({ since: isoInstant().describe(`ISO 8601 with zone, within the last ${REPLAY_DAYS} days`) }),
      response: {
        202: z.object({ replayed: z.number().int().describe('Deliveries queued') }),
        ...errorResponses(400, 401, 403, 404, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const since = new Date(request.body.since);
      const now = app.clock.now();
      if (since.getTime() < now.getTime() - REPLAY_DAYS * DAY_MS || since > now)
        throw invalidRequest('since', `must be within the last ${REPLAY_DAYS} days`);
      const replayed = await app.webhookEndpoints.replaySince(request.employee.companyId, request.params.endpoint_id, since);
      return reply.code(202).send({ replayed });
    },
  });
}
