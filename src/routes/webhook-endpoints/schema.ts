// A webhook endpoint as the management endpoints show it (never with its secret, except the
// answers of create and rotate-secret, which add `secret`), and the fields a request may set.
import { z } from 'zod';
import { coolingUnitIdsField, distinct, onArray } from '../../http/schemas.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/events.js';

export const webhookEndpoint = z
  .object({
    id: z.uuid(),
    company_id: z.number().int(),
    url: z.string().describe('Where events are POSTed'),
    description: z.string(),
    event_types: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    cooling_unit_ids: z.array(z.number().int()).describe('Sensor events limited to these units; empty: every unit of the company'),
    enabled: z.boolean(),
    disabled_reason: z
      .enum(['employee', 'failing'])
      .nullable()
      .describe('employee: disabled by an update; failing: a delivery failed for over a day; null while enabled'),
    disabled_at: z.string().nullable(),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .describe('After a secret rotation: until when the previous secret also signs deliveries; null when only one signs'),
    created_at: z.string(),
    created_by: z.number().int().describe('User id of the employee who registered it'),
    updated_at: z.string(),
  })
  .meta({ id: 'WebhookEndpoint' });

export const withSecret = webhookEndpoint.extend({
  secret: z.string().describe('The signing secret (whsec_...), shown only in this answer: keep it to verify deliveries'),
});

export const endpointFields = {
  url: z
    .string()
    .max(2048)
    .describe(
      'https URL (http only to networks the SRE allowed), without a user name, password or #fragment; its host must resolve to public addresses only, checked now and at every delivery',
    ),
  description: z
    .string()
    .trim()
    .refine((text) => [...text].length <= 500, 'must be at most 500 characters')
    .refine((text) => !/\p{Cc}/u.test(text), 'must not contain control characters')
    .describe('Up to 500 characters, no control characters; trimmed'),
  event_types: z
    .array(z.enum(WEBHOOK_EVENT_TYPES))
    .min(1, { error: 'must name at least one event type', ...onArray })
    .refine(distinct, 'must not repeat an event type')
    .meta({ uniqueItems: true }),
  cooling_unit_ids: coolingUnitIdsField().describe(
    "Sensor events limited to these units, each a live unit of the employee's company; empty: every unit",
  ),
};

export const endpointIdParams = z.object({ endpoint_id: z.string().describe('Webhook endpoint id (UUID)') });
