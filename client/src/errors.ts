// What a failed call throws. An HTTP error answer is a ColdtrackApiError carrying the service's
// error body (status, code, message, details); a request that never got an answer is a
// ColdtrackTimeoutError or a ColdtrackNetworkError. A call the caller aborted rejects with the
// AbortSignal's reason, as fetch does.

/** The service's error codes (docs/partners.md, "Errors"); a newer service may send others. */
export type ColdtrackErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'not_found'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable'
  | (string & {});

export class ColdtrackApiError extends Error {
  override readonly name = 'ColdtrackApiError';

  constructor(
    /** HTTP status */
    readonly status: number,
    readonly code: ColdtrackErrorCode,
    message: string,
    /** e.g. `{ field: "start_date" }` on a 400, `{ required_scope: "revenue" }` on a 403 */
    readonly details: Record<string, unknown> | undefined,
    /** what the call was: `GET /api/v1/sensor-data` */
    readonly request: string,
    /** the service's X-Request-Id, to quote to its operators */
    readonly requestId: string | null,
    /** seconds, from Retry-After (429, 503) */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }

  /** 400, 401, 403, 404, 413, 415: repeating the same call cannot succeed. */
  get permanent(): boolean {
    return this.status >= 400 && this.status < 500 && this.status !== 408 && this.status !== 429;
  }
}

export class ColdtrackTimeoutError extends Error {
  override readonly name = 'ColdtrackTimeoutError';

  constructor(
    readonly request: string,
    readonly timeoutMs: number,
  ) {
    super(`${request}: no complete answer within ${timeoutMs} ms`);
  }
}

export class ColdtrackNetworkError extends Error {
  override readonly name = 'ColdtrackNetworkError';

  constructor(
    readonly request: string,
    cause: unknown,
  ) {
    super(`${request}: ${describeCause(cause)}`, { cause });
  }
}

/** fetch's "fetch failed" hides the useful part (ECONNREFUSED, socket hang up) in its cause. */
function describeCause(cause: unknown): string {
  const error = cause as { message?: string; cause?: { code?: string; message?: string } } | undefined;
  const inner = error?.cause;
  if (inner?.code || inner?.message) return `${error?.message ?? 'network error'} (${inner.code ?? inner.message})`;
  return error?.message ?? String(cause);
}
