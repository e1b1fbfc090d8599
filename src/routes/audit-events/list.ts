// GET /api/v1/audit-events: the company's token audit trail, newest first, in the data endpoints'
// envelope. A token_id filter naming a token that is not the company's is 404, like the token routes.
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../../audit/events.js';
import { invalidRequest, notFound } from '../../http/errors.js';
import { envelopeSchema, errorResponses, isoInstant, paginationFor, paginationQuery } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { isTokenId } from '../api-tokens/schema.js';
import { auditEvent } from './schema.js';

const querystring = z.strictObject({
  ...paginationQuery,
  token_id: z
    .string({ error: 'must be given once' })
    .optional()
    .describe(
      'Only events naming this token, either way (a rotation names the token rotated and its replacement). A token of another company, an unknown id or one that is not a UUID: 404',
    ),
  action: z
    .enum(AUDIT_ACTIONS, { error: `must be one of ${AUDIT_ACTIONS.join(', ')}` })
    .optional()
    .describe('Only events of this action; omitted: all'),
  from: isoInstant().optional().describe('Only events at or after this instant: ISO 8601 with a zone, on a day of the years 0001-9999'),
  to: isoInstant()
    .optional()
    .describe('Only events before this instant: ISO 8601 with a zone, on a day of the years 0001-9999; to before from is 400'),
});

const filters = z.object({
  token_id: z.uuid().nullable(),
  action: z.enum(AUDIT_ACTIONS).nullable(),
  from: z.string().nullable(),
  to: z.string().nullable(),
});

export default async function listAuditEvents(app: App) {
  app.get('/', {
    schema: {
      operationId: 'listAuditEvents',
      summary: 'List token audit events',
      description:
        'Every token event of the company (created, rotated, revoked, leak reported, revoked as leaked), newest first: who (actor), when, from which IP and ' +
        'user agent, with which request id. Events are never changed or removed; each carries a hash over its content and ' +
        "the previous event's hash, a chain per company.",
      tags: ['Audit'],
      security: [{ employeeJwt: [] }],
      querystring,
      response: {
        200: envelopeSchema(auditEvent, filters),
        ...errorResponses(400, 401, 403, 404, 429, 503),
      },
    },
    handler: async (request) => {
      const { companyId } = request.employee;
      const { page, page_size: pageSize, action = null } = request.query;
      const from = request.query.from === undefined ? null : new Date(request.query.from);
      const to = request.query.to === undefined ? null : new Date(request.query.to);
      if (from && to && to.getTime() < from.getTime()) throw invalidRequest('to', 'to must not be before from');
      let tokenId: string | null = null;
      if (request.query.token_id !== undefined) {
        // the id as the database spells it, the way the token routes match it
        const candidate = request.query.token_id.toLowerCase();
        const known = isTokenId(candidate) && (await app.tokenRepository.findToken(companyId, candidate)) !== null;
        if (!known) throw notFound('No API token with this id');
        tokenId = candidate;
      }
      const { records, totalCount } = await app.auditTrail.listEvents(
        companyId,
        { tokenId, action, from, to },
        pageSize,
        (page - 1) * pageSize,
      );
      return {
        data: records,
        meta: {
          company_id: companyId,
          filters: { token_id: tokenId, action, from: from?.toISOString() ?? null, to: to?.toISOString() ?? null },
          pagination: paginationFor(page, pageSize, totalCount),
        },
      };
    },
  });
}
