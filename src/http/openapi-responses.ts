// What the OpenAPI document says of every operation beyond its zod schemas: every status the
// service can answer (the strict parsing, the HTTP parser's refusals, the rate limits, outages),
// the headers that come with them (a conditional route's ETag, If-None-Match and 304 too), and
// query integers as integers. Applied to each route's generated schema (src/plugins/openapi.ts),
// so no route repeats it.

const ERROR_REF = { $ref: '#/components/schemas/Error' };

const DESCRIPTIONS: Record<string, string> = {
  200: 'OK',
  201: 'Created',
  400: 'Invalid request: an unknown, repeated or malformed parameter, body field or header (details.field names it)',
  401: 'Missing, malformed, unknown, expired or revoked credentials',
  403: 'Authenticated but not allowed (details.required_scope)',
  404: 'No such resource for this company, or one this token may not read',
  408: 'The request did not arrive in time (refused by the HTTP parser; the connection is closed)',
  409: "The resource's state forbids the change (details.reason)",
  413: 'The body is over 64 KiB',
  415: 'Content-Type must be application/json',
  429: 'Rate limit exceeded; retry after Retry-After seconds (X-RateLimit-Reset says when the window resets)',
  431: 'Headers or URL over 16 KiB (refused by the HTTP parser; the connection is closed)',
  500: 'A fault of the service (never caused by input by design); the body has no detail',
  503: 'A dependency (the database, or Redis for a revoke) cannot answer now; retry after Retry-After seconds',
};

// an API token's 403s: the data surface checks the token's scope and its IP allow-list
const TOKEN_FORBIDDEN =
  'Authenticated but not allowed: the token lacks the scope (insufficient_scope, details.required_scope) or is used from an ' +
  'address outside its allow-list (ip_not_allowed, details.client_ip)';

const header = (description: string, schema: Record<string, unknown>) => ({ description, ...schema });
const REQUEST_ID = header('The request id: the X-Request-Id sent (letters, digits, ".:_-", up to 128) or a new UUID', { type: 'string' });
const RATE_LIMIT = {
  'X-RateLimit-Limit': header('Requests allowed in the current one-minute window', { type: 'integer' }),
  'X-RateLimit-Remaining': header('Requests left in the current window', { type: 'integer', minimum: 0 }),
  'X-RateLimit-Reset': header('When the window resets, as a Unix timestamp in seconds', { type: 'integer' }),
};
const RETRY_AFTER = { 'Retry-After': header('Seconds to wait before retrying', { type: 'integer', minimum: 1 }) };
// a route that answers conditional requests (src/data-surface/conditional-requests.ts)
const VALIDATOR = {
  ETag: header(
    'This answer\'s entity tag, for If-None-Match: weak (W/"...") when it names the version of the readings a sensor-history ' +
      'page was read at, strong ("...") otherwise (docs/partners.md, "Conditional requests (ETag)")',
    { type: 'string' },
  ),
  'Cache-Control': header("private, no-cache: the token's own answer, to be revalidated (If-None-Match) before it is used again", {
    type: 'string',
  }),
};
const NOT_MODIFIED =
  'Not Modified: If-None-Match names the current answer (or is *), which the client already holds. No body; not counted ' +
  "against the rate limit (X-RateLimit-Remaining as before it), counted in the token's usage as a 304";
const IF_NONE_MATCH = {
  type: 'object',
  properties: {
    'If-None-Match': {
      type: 'string',
      description:
        'ETags of answers to this request the client holds (or *): when one names the current answer (weak comparison), ' +
        'the answer is 304 with no body, not counted against the rate limit',
    },
  },
};

const WWW_AUTHENTICATE = {
  'WWW-Authenticate': header('RFC 6750 challenge, e.g. Bearer realm="coldtrack", error="invalid_token"', { type: 'string' }),
};

interface RouteSchema {
  response?: Record<string, Record<string, unknown>>;
  querystring?: { properties?: Record<string, Record<string, unknown>> };
  body?: unknown;
  security?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

const OPERATIONS_PATHS = new Set(['/healthz', '/readyz']);

/** The route's schema, with every answer it can give documented; `conditional`: it answers If-None-Match. */
export function documentResponses(url: string, schema: RouteSchema, { conditional = false } = {}): RouteSchema {
  const rateLimited = !OPERATIONS_PATHS.has(url);
  const authenticated = (schema.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
  const usesApiToken = (schema.security ?? []).some((requirement) => 'apiToken' in requirement);
  const response: Record<string, Record<string, unknown>> = { ...(schema.response ?? {}) };
  // no body: @fastify/swagger documents a null schema as an answer without content
  if (conditional) response['304'] ??= { type: 'null', description: NOT_MODIFIED };
  const statuses = ['400', '408', '431', '500', ...(schema.body ? ['413', '415'] : []), ...(rateLimited ? ['429', '503'] : ['503'])];
  for (const status of statuses) response[status] ??= { ...ERROR_REF };
  for (const [status, answer] of Object.entries(response)) {
    const parserRefusal = status === '408' || status === '431';
    const headers: Record<string, unknown> = { 'X-Request-Id': REQUEST_ID };
    // the limits' headers come with every answer once the caller is counted (not the parser's)
    if (rateLimited && !parserRefusal && status !== '500') Object.assign(headers, RATE_LIMIT);
    if (status === '429' || status === '503') Object.assign(headers, RETRY_AFTER);
    if (conditional && (status === '200' || status === '304')) Object.assign(headers, VALIDATOR);
    if (authenticated && (status === '401' || status === '403')) Object.assign(headers, WWW_AUTHENTICATE);
    if (parserRefusal) delete headers['X-Request-Id'];
    response[status] = {
      ...answer,
      description:
        (status === '403' && usesApiToken ? TOKEN_FORBIDDEN : DESCRIPTIONS[status]) ??
        (answer.description as string | undefined) ??
        'Response',
      headers,
    };
  }
  return {
    ...schema,
    response,
    querystring: integerQuery(schema.querystring),
    ...(conditional ? { headers: IF_NONE_MATCH } : {}),
  };
}

/**
 * Query integers are validated from text (digits only, one occurrence), but a client sends
 * integers: the document says integer with the bounds the validator applies (queryInteger's meta).
 */
function integerQuery(querystring: RouteSchema['querystring']) {
  if (!querystring?.properties) return querystring;
  const properties = Object.fromEntries(
    Object.entries(querystring.properties).map(([name, property]) => {
      const bounds = property['x-integer'] as { minimum: number; maximum: number } | undefined;
      if (!bounds) return [name, property];
      const { pattern: _pattern, type: _type, 'x-integer': _bounds, ...rest } = property;
      return [name, { ...rest, type: 'integer', minimum: bounds.minimum, maximum: bounds.maximum }];
    }),
  );
  return { ...querystring, properties };
}
