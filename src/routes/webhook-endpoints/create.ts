// POST /api/v1/webhook-endpoints: a Registered Employee registers an endpoint for their company.
// The signing secret is in this answer only.
import { z } from 'zod';
import { employeeOrigin } from '../../audit/origin.js';
import { errorBody, errorResponses } from '../../http/schemas.js';
import { requireJsonBody } from '../../http/strict-json.js';
import type { App } from '../../types.js';
import { endpointFields, withSecret } from './schema.js';

const body = z.strictObject({
  url: endpointFields.url,
  description: endpointFields.description.default(''),
  event_types: endpointFields.event_types,
  cooling_unit_ids: endpointFields.cooling_unit_ids.default([]),
});

export default async function createWebhookEndpoint(app: App) {
  app.post('/', {
    config: { carriesSecret: true },
    preParsing: requireJsonBody,
    schema: {
      operationId: 'createWebhookEndpoint',
      summary: 'Register a webhook endpoint',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      body,
      response: {
        201: withSecret,
        409: errorBody.describe('The company has as many endpoints as it may (code conflict)'),
        ...errorResponses(400, 401, 403, 415, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const { companyId, userId } = request.employee;
      const created = await app.webhookEndpoints.create(companyId, userId, request.body, employeeOrigin(request));
      reply.code(201).header('location', `/api/v1/webhook-endpoints/${created.id}`);
      return created;
    },
  });
}
