// The one error type of the service. Every failure becomes an ApiError and is rendered as
// {"error": {"code", "message", "details"}} by the error handler plugin, and nowhere else.
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_cursor'
  | 'cursor_expired'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'ip_not_allowed'
  | 'not_found'
  | 'conflict'
  | 'method_not_allowed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** extra response headers: WWW-Authenticate, Retry-After */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody() {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

export const invalidRequest = (field: string, message: string) => new ApiError(400, 'invalid_request', message, { field });

/** RFC 6750: no error attribute when no credentials were sent at all. */
export const unauthorized = (message: string, credentialsSent = true) =>
  new ApiError(401, 'unauthorized', message, undefined, {
    'www-authenticate': credentialsSent ? 'Bearer realm="coldtrack", error="invalid_token"' : 'Bearer realm="coldtrack"',
  });

export const insufficientScope = (requiredScope: string, message?: string) =>
  new ApiError(
    403,
    'insufficient_scope',
    message ?? `This token lacks the "${requiredScope}" scope`,
    { required_scope: requiredScope },
    { 'www-authenticate': `Bearer realm="coldtrack", error="insufficient_scope", scope="${requiredScope}"` },
  );

/** A known, live token used from an address outside its allow-list; `address`: request.ip as the service saw it. */
export const ipNotAllowed = (address: string) =>
  new ApiError(
    403,
    'ip_not_allowed',
    `This API token may not be used from ${address}`,
    { client_ip: address },
    // like every 403 of a bearer token; no RFC 6750 error code fits an address outside the list
    { 'www-authenticate': 'Bearer realm="coldtrack"' },
  );

export const notFound = (message = 'Not found') => new ApiError(404, 'not_found', message);

export const unsupportedMediaType = () => new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json');

/** What a 503 `unavailable` waited on: the unavailable_responses_total label, never sent. */
export type Dependency = 'database' | 'redis';

/** A 503: a dependency cannot answer now. The client sees only `unavailable`; the metrics see which. */
export class DependencyUnavailable extends ApiError {
  constructor(
    readonly dependency: Dependency,
    retryAfterSeconds = 5,
  ) {
    super(503, 'unavailable', 'A dependency is unavailable; retry shortly', undefined, { 'retry-after': String(retryAfterSeconds) });
  }
}

export const unavailable = (dependency: Dependency, retryAfterSeconds = 5) => new DependencyUnavailable(dependency, retryAfterSeconds);
