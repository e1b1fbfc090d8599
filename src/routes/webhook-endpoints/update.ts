// PATCH /api/v1/webhook-endpoints/{endpoint_id}: change what is given (url, description, event
// types, units) and enable or disable it. Enabling one disabled for failing sends what waited.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { errorResponses } from '../../http/schemas.js';
import { requireJsonBody } from '../../http/strict-json.js';
import type { App } from '../../types.js';
import { endpointFields, endpointIdParams, webhookEndpoint } from './schema.js';

const body = z
  .strictObject({
    url: endpointFields.url.optional(),
    description: endpointFields.description.optional(),
    event_types: endpointFields.event_types.optional(),
    cooling_unit_ids: endpointFields.cooling_unit_ids.optional(),
    enabled: z.boolean().optional().describe('false: nothing is sent (events wait); true: sending resumes'),
  })
  .refine((changes) => Object.values(changes).some((value) => value !== undefined), 'must change at least one field')
  .describe('The fields to change: at least one');

export default async function updateWebhookEndpoint(app: App) {
  app.patch('/:endpoint_id', {
    preParsing: requireJsonBody,
    schema: {
      operationId: 'updateWebhookEndpoint',
      summary: 'Update, enable or disable a webhook endpoint',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams,
      body,
      response: { 200: webhookEndpoint, ...errorResponses(400, 401, 403, 404, 415, 429, 503) },
    },
    handler: async (request) =>
      app.webhookEndpoints.update(request.employee.companyId, request.params.endpoint_id, request.body, employeeOrigin(request)),
  });
}
