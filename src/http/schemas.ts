// Schemas shared by many routes: the error body, pagination parameters and the envelope.
// One definition each, so validation, types and the OpenAPI document never drift apart.
import { z } from 'zod';
import { MAX_INT4 } from '../db/int4.js';
import { hasRealDatePart } from './dates.js';

export const errorBody = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .meta({ id: 'Error' });
/** An error's JSON, for the tests: a change of the schema breaks them at the type check. */
export type ErrorJson = z.infer<typeof errorBody>;

/**
 * An instant: ISO 8601 with a zone, on a real calendar day. ISO 8601 lets the seconds go
 * (2030-01-01T00:00Z); RFC 3339 and zod's default do not.
 */
export const isoInstant = () =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.datetime({ offset: true, precision: -1 })], {
      error: 'must be an ISO 8601 timestamp with a time zone',
    })
    .refine(hasRealDatePart, 'must name a real calendar day');

/** Query-string integer: one occurrence, digits only (repeated or fractional values are 400). */
export const queryInteger = (min: number, max: number) =>
  z
    .string({ error: 'must be given once, as a whole number' })
    .regex(/^\d{1,10}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    // the document shows an integer with these bounds (src/http/openapi-responses.ts)
    .meta({ 'x-integer': { minimum: min, maximum: max } });

/** An id in the query string (cooling_unit_id, location_id): any int4 above 0. */
export const idQuery = () => queryInteger(1, MAX_INT4);

export const MAX_PAGE_SIZE = 1000;
/** Any page a client's 32-bit counter can name is a page: past the last one it is empty, not 400. */
export const MAX_PAGE = MAX_INT4;
export const DEFAULT_PAGE_SIZE = 100;

export const paginationQuery = {
  page: queryInteger(1, MAX_PAGE).default(1).describe(`Page number, 1..${MAX_PAGE}; past the last page, data is empty`),
  page_size: queryInteger(1, MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE).describe(`Records per page, 1..${MAX_PAGE_SIZE}`),
};

export const paginationMeta = z.object({
  page: z.number().int(),
  page_size: z.number().int(),
  total_count: z.number().int(),
  total_pages: z.number().int(),
  has_next: z.boolean(),
  has_previous: z.boolean(),
});

export function envelopeSchema<Record extends z.ZodType, Filters extends z.ZodType>(record: Record, filters: Filters) {
  return z.object({
    data: z.array(record),
    meta: z.object({
      company_id: z.number().int(),
      filters,
      pagination: paginationMeta,
    }),
  });
}

export function paginationFor(page: number, pageSize: number, totalCount: number) {
  const totalPages = Math.ceil(totalCount / pageSize);
  return {
    page,
    page_size: pageSize,
    total_count: totalCount,
    total_pages: totalPages,
    has_next: page < totalPages,
    has_previous: page > 1,
  };
}

const errorDescriptions = {
  400: 'Invalid parameter or body field (details.field names it)',
  401: 'Missing, invalid, expired or revoked credentials (WWW-Authenticate: Bearer)',
  403: 'Authenticated but not allowed (details.required_scope)',
  404: 'No such resource for this company',
  410: 'The cursor is older than the changes the service keeps (cursor_expired): export again',
  415: 'Content-Type must be application/json',
  429: 'Rate limit exceeded; see Retry-After',
  503: 'A dependency is down; see Retry-After',
} as const;
type ErrorStatus = keyof typeof errorDescriptions;

/** The documented error responses of a route, all with the one error body. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  return Object.fromEntries(statuses.map((status) => [status, errorBody.describe(errorDescriptions[status])])) as Record<
    S,
    typeof errorBody
  >;
}

/**
 * zod runs length checks on any value that has a `length` key, even one that already failed the
 * type check, and `{"length": [{"toString": 1}]}` then throws inside zod (a 500 instead of a 400):
 * spread into a check's options so it measures only a value of the right type.
 */
const onString = { when: (payload: { value: unknown }) => typeof payload.value === 'string' };
export const onArray = { when: (payload: { value: unknown }) => Array.isArray(payload.value) };

// Characters no name or code may hold: C0, DEL and C1 (Unicode's Cc), written as ranges so any
// regex dialect reads it, unlike \p{Cc}. JavaScript's \s is exactly what String.trim removes.
const CONTROL = '\\x00-\\x1f\\x7f-\\x9f';

/**
 * A text field that is trimmed, then must hold 1..max characters (code points, as PostgreSQL and
 * JSON Schema count them, not UTF-16 units) and no control character. The document's pattern says
 * the same of the text as sent: optional surrounding whitespace around 1..max characters that
 * start and end with neither whitespace nor a control character.
 */
export function trimmedText(max: number) {
  const edge = `[^\\s${CONTROL}]`;
  const pattern = `^\\s*${edge}(?:[^${CONTROL}]{0,${max - 2}}${edge})?\\s*$`;
  return z
    .string()
    .trim()
    .min(1, { error: 'must not be empty', ...onString })
    .refine((text) => [...text].length <= max, `must be at most ${max} characters`)
    .refine((text) => !/\p{Cc}/u.test(text), 'must not contain control characters')
    .meta({ pattern });
}

/** Whether a list holds each item once. */
export const distinct = (values: readonly unknown[]) => new Set(values).size === values.length;

/** A list of the caller's cooling units (a token's, a webhook endpoint's): ids, each once, at most 1,000. */
export function coolingUnitIdsField() {
  return z
    .array(z.number().int().positive().max(MAX_INT4))
    .max(1000, { error: 'must list at most 1000 units', ...onArray })
    .refine(distinct, 'must not repeat a unit')
    .meta({ uniqueItems: true });
}
