// GET /api/v1/webhook-endpoints/{endpoint_id}/deliveries: the endpoint's delivery log, newest
// first: each event sent to it, its status, attempts, the last attempt's answer and the next retry.
import { z } from 'zod';
import { envelopeSchema, errorResponses, paginationFor, paginationQuery } from '../../http/schemas.js';
import type { App } from '../../types.js';
import { endpointIdParams } from './schema.js';

const STATUSES = ['pending', 'succeeded', 'failed'] as const;
const OUTCOMES = ['succeeded', 'failed', 'interrupted'] as const;

export const delivery = z
  .object({
    id: z.number().int(),
    message_id: z.string().describe('The webhook-id header of every attempt: receivers dedupe by it'),
    event_type: z.string(),
    occurred_at: z.string(),
    status: z.enum(STATUSES).describe('pending: not delivered yet (see next_attempt_at); succeeded; failed: out of retries'),
    attempts: z.number().int().describe('Attempts so far (since its last replay), the one under way included'),
    interrupted_attempts: z
      .number()
      .int()
      .describe(
        'Attempts in its log (replays included) cut short: the sending process stopped before their answer was recorded, ' +
          'and the delivery was tried again; the endpoint may have received them',
      ),
    next_attempt_at: z.string().nullable().describe('When it is tried next; null once succeeded or failed'),
    last_attempt: z
      .object({
        at: z.string(),
        outcome: z
          .enum(OUTCOMES)
          .describe(
            'succeeded: answered 2xx; failed: another answer, or none (timeout, refused, unreachable); interrupted: the sending ' +
              'process stopped before the answer was recorded (the endpoint may have received it), and the delivery is tried again',
          ),
        status_code: z
          .number()
          .int()
          .nullable()
          .describe("The endpoint's answer; null: none (timeout, refused, unreachable) or none recorded (interrupted)"),
        error: z.string().nullable().describe('Why the attempt failed or was interrupted; null when it succeeded'),
        duration_ms: z.number().int().describe('0 when interrupted: not known'),
      })
      .nullable()
      .describe('The last attempt that has ended (one under way is not shown); null before any has'),
    completed_at: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export default async function listWebhookDeliveries(app: App) {
  app.get('/:endpoint_id/deliveries', {
    schema: {
      operationId: 'listWebhookDeliveries',
      summary: "A webhook endpoint's delivery log",
      tags: ['Webhooks'],
      security: [{ employeeJwt: [] }],
      params: endpointIdParams,
      querystring: z.strictObject({
        ...paginationQuery,
        status: z
          .enum(STATUSES, { error: `must be one of ${STATUSES.join(', ')}` })
          .optional()
          .describe('Only deliveries in this status'),
      }),
      response: {
        200: envelopeSchema(delivery, z.object({ status: z.enum(STATUSES).nullable() })),
        ...errorResponses(400, 401, 403, 404, 429, 503),
      },
    },
    handler: async (request) => {
      const { companyId } = request.employee;
      const { page, page_size: pageSize, status = null } = request.query;
      const rows = await app.webhookEndpoints.deliveries(companyId, request.params.endpoint_id, status, pageSize, (page - 1) * pageSize);
      return {
        data: rows.map((row) => ({
          id: Number(row.id),
          message_id: row.message_id,
          event_type: row.type,
          occurred_at: row.occurred_at.toISOString(),
          status: row.status,
          attempts: row.attempts,
          interrupted_attempts: row.interrupted_attempts,
          next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
          last_attempt: row.last_attempt_at
            ? {
                at: row.last_attempt_at.toISOString(),
                outcome: row.last_outcome!,
                status_code: row.last_status_code,
                error: row.last_error,
                duration_ms: row.last_duration_ms ?? 0,
              }
            : null,
          completed_at: row.completed_at?.toISOString() ?? null,
        })),
        meta: { company_id: companyId, filters: { status }, pagination: paginationFor(page, pageSize, rows[0]?.total_count ?? 0) },
      };
    },
  });
}
