// POST /api/v1/webhook-endpoints/{endpoint_id}/rotate-secret: a new signing secret (in this answer
// only); the old one keeps signing beside it for the grace period, so a receiver can switch
// without a delivery it cannot verify.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { emptyBodyIsNoBody } from '../../http/empty-body.js';
import { errorResponses } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { DAY_MS, SECOND_MS } from '../../time.js';
import { endpointIdParams, withSecret } from './schema.js';

const MAX_GRACE_SECONDS = (7 * DAY_MS) / SECOND_MS;

const body = z
  .strictObject({
    grace_period_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_GRACE_SECONDS)
      .default(DAY_MS / SECOND_MS)
      .describe('How long the previous secret also signs, 0 to 604800 (7 days); default 86400. 0: it stops at once'),
  })
  .nullish();

export default async function rotateWebhookSecret(app: App) {
  app.addHook('onRequest', emptyBodyIsNoBody);

  app.post('/:endpoint_id/rotate-secret', {
    config: { carriesSecret: true },
    schema: {
      operationId: 'rotateWebhookSecret',
      summary: "Rotate a webhook endpoint's signing secret",
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams,
      body,
      response: { 200: withSecret, ...errorResponses(400, 401, 403, 404, 415, 429, 503) },
    },
    handler: async (request) => {
      const graceSeconds = request.body?.grace_period_seconds ?? DAY_MS / SECOND_MS;
      return app.webhookEndpoints.rotateSecret(
        request.employee.companyId,
        request.params.endpoint_id,
        graceSeconds * SECOND_MS,
        employeeOrigin(request),
      );
    },
  });
}
