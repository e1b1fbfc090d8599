// POST /api/v1/api-tokens: a Registered Employee creates a token for their company. The raw
// token is in this response only; the database keeps its SHA-256.
import { z } from 'zod';
import { hasRealDatePart } from '../../http/dates.js';
import { invalidRequest, unsupportedMediaType } from '../../http/errors.js';
import { errorResponses } from '../../http/schemas.js';
import { generateToken, hashToken } from '../../tokens/format.js';
import { SCOPES } from '../../tokens/scopes.js';
import type { App } from '../../types.js';
import { apiToken } from './schema.js';

const distinct = (values: readonly unknown[]) => new Set(values).size === values.length;
const MAX_UNIT_ID = 2_147_483_647;

// zod runs length checks on any value that has a `length` key, even one that already failed the
// type check, and `{"length": [{"toString": 1}]}` then throws inside zod (a 500 instead of a 400).
// Length is only measured on a value of the right type.
const onString = { when: (payload: { value: unknown }) => typeof payload.value === 'string' };
const onArray = { when: (payload: { value: unknown }) => Array.isArray(payload.value) };

const body = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty', ...onString })
    .max(100, { error: 'must be at most 100 characters', ...onString })
    .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters'),
  scopes: z
    .array(z.enum(SCOPES))
    .min(1, { error: 'must name at least one scope', ...onArray })
    .refine(distinct, 'must not repeat a scope'),
  cooling_unit_ids: z
    .array(z.number().int().positive().max(MAX_UNIT_ID))
    .max(1000, { error: 'must list at most 1000 units', ...onArray })
    .refine(distinct, 'must not repeat a unit')
    .default([])
    .describe('Units the token is restricted to; empty or omitted: company-wide'),
  // ISO 8601 lets the seconds go (2030-01-01T00:00Z); RFC 3339 and zod's default do not
  expires_at: z
    .union([z.iso.datetime({ offset: true }), z.iso.datetime({ offset: true, precision: -1 })], {
      error: 'must be an ISO 8601 timestamp with a time zone',
    })
    .refine(hasRealDatePart, 'must name a real calendar day')
    .nullable()
    .default(null)
    .describe('ISO 8601 with zone, in the future; null or omitted: never expires'),
});

// every expiry must print as a plain 4-digit-year ISO timestamp
const LATEST_EXPIRY = Date.UTC(9999, 11, 31, 23, 59, 59);
const JSON_MEDIA_TYPE = /^application\/json\s*(;|$)/i;

export default async function createApiToken(app: App) {
  app.post('/', {
    schema: {
      summary: 'Create an API token',
      tags: ['API tokens'],
      security: [{ employeeJwt: [] }],
      body,
      response: {
        201: apiToken.extend({ token: z.string().describe('The raw token, shown once') }),
        ...errorResponses(400, 401, 403, 415, 429, 503),
      },
    },
    // before body parsing: a form or text body is refused as a media type, not as a shape
    preParsing: async (request) => {
      if (!JSON_MEDIA_TYPE.test(request.headers['content-type'] ?? '')) throw unsupportedMediaType();
    },
    handler: async (request, reply) => {
      const { companyId, userId } = request.employee;
      const now = app.clock.now();
      const { name, scopes, cooling_unit_ids: coolingUnitIds } = request.body;

      const expiresAt = request.body.expires_at === null ? null : new Date(request.body.expires_at);
      if (expiresAt && expiresAt.getTime() <= now.getTime()) {
        throw invalidRequest('expires_at', 'expires_at must be in the future');
      }
      if (expiresAt && expiresAt.getTime() > LATEST_EXPIRY) {
        throw invalidRequest('expires_at', 'expires_at must be before the year 10000 (UTC); use null for a token that never expires');
      }
      if (coolingUnitIds.length > 0) {
        const live = await app.tokenRepository.liveUnitIds(companyId, coolingUnitIds);
        const unknown = coolingUnitIds.filter((id) => !live.has(id));
        if (unknown.length > 0) {
          throw invalidRequest(
            'cooling_unit_ids',
            `Not a live cooling unit of your company: ${unknown.slice(0, 10).join(', ')}`,
          );
        }
      }

      const token = generateToken();
      const record = await app.tokenRepository.createToken({
        companyId,
        createdBy: userId,
        name,
        scopes,
        coolingUnitIds,
        expiresAt,
        tokenHash: hashToken(token),
        now,
      });
      reply.code(201).header('cache-control', 'no-store');
      return { ...record, token };
    },
  });
}
