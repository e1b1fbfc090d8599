// GET /api/v1/webhook-endpoints: the company's endpoints, newest first, in the envelope of the
// other lists.
import { z } from 'zod';
import { envelopeSchema, errorResponses, paginationFor, paginationQuery } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { webhookEndpoint } from './schema.js';

export default async function listWebhookEndpoints(app: App) {
  app.get('/', {
    schema: {
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints',
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      querystring: z.strictObject(paginationQuery),
      response: { 200: envelopeSchema(webhookEndpoint, z.object({})), ...errorResponses(400, 401, 403, 429, 503) },
    },
    handler: async (request) => {
      const { companyId } = request.employee;
      const { page, page_size: pageSize } = request.query;
      const { records, totalCount } = await app.webhookEndpoints.list(companyId, pageSize, (page - 1) * pageSize);
      return { data: records, meta: { company_id: companyId, filters: {}, pagination: paginationFor(page, pageSize, totalCount) } };
    },
  });
}
