// What a failed call throws: always an instance of ColdtrackError, with a `code` to branch on.
// An HTTP error answer is a ColdtrackApiError carrying the service's error body (status, code,
// message, details); a request that never got an answer is a ColdtrackTimeoutError or a
// ColdtrackNetworkError; a success answer that is not the JSON the API sends is a
// ColdtrackInvalidResponseError; a wait the service asks for that is longer than the client
// waits (transport.ts: maxWaitMs, maxTotalWaitMs) is a ColdtrackRetryLaterError. A call the
// caller aborted rejects with the AbortSignal's reason, as fetch does.
// Text that came from the wire (a message, details) is redacted before it reaches an error: a
// server, a proxy or an attacker's relay that echoes the Authorization header does not put the
// token into a message a partner logs (redact.ts).

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

/** The codes of the failures the client itself detects (no error body of the service). */
export type ColdtrackClientErrorCode = 'timeout' | 'network_error' | 'invalid_response' | 'retry_later';

/** Every error the client throws (but an abort's reason) is one of these. */
export abstract class ColdtrackError extends Error {
  abstract readonly code: ColdtrackErrorCode | ColdtrackClientErrorCode;
}

export class ColdtrackApiError extends ColdtrackError {
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

export class ColdtrackTimeoutError extends ColdtrackError {
  override readonly name = 'ColdtrackTimeoutError';
  readonly code = 'timeout';

  constructor(
    readonly request: string,
    readonly timeoutMs: number,
  ) {
    super(`${request}: no complete answer within ${timeoutMs} ms`);
  }
}

export class ColdtrackNetworkError extends ColdtrackError {
  override readonly name = 'ColdtrackNetworkError';
  readonly code = 'network_error';

  constructor(
    readonly request: string,
    cause: unknown,
    redact: (text: string) => string = (text) => text,
  ) {
    super(`${request}: ${redact(describeCause(cause))}`, { cause });
  }
}

/** A success status whose body is not the JSON the API answers (a proxy's HTML page, a cut body). */
export class ColdtrackInvalidResponseError extends ColdtrackError {
  override readonly name = 'ColdtrackInvalidResponseError';
  readonly code = 'invalid_response';

  constructor(
    readonly request: string,
    readonly status: number,
    /** the answer's Content-Type, as sent */
    readonly contentType: string | null,
    readonly requestId: string | null,
    /** why it is not an answer of the API, e.g. "not JSON" */
    reason: string,
  ) {
    super(`${request}: HTTP ${status} answered ${reason} (content-type ${contentType ?? 'none'}), not the API's JSON`);
  }
}

/**
 * The service asked to wait longer than the client waits (one wait over `maxWaitMs`, or this
 * call's waits together over `maxTotalWaitMs`): thrown at once instead of sleeping, with how long
 * the service asked for, so the caller decides (try again after `retryAt`, or give up).
 */
export class ColdtrackRetryLaterError extends ColdtrackError {
  override readonly name = 'ColdtrackRetryLaterError';
  readonly code = 'retry_later';

  constructor(
    readonly request: string,
    /** the wait the service asked for, in seconds (Infinity for a value no clock can reach) */
    readonly retryAfterSeconds: number,
    /** when the service said to come back; null when that is not a representable date */
    readonly retryAt: Date | null,
    /** the longest wait the client takes (ms), and what was over it */
    readonly limitMs: number,
    readonly limit: 'maxWaitMs' | 'maxTotalWaitMs',
    /** the refusal that asked for the wait (a 429 or 503), when one did */
    cause?: ColdtrackApiError,
  ) {
    super(
      `${request}: the service asks to wait ${describeSeconds(retryAfterSeconds)}` +
        `${limit === 'maxTotalWaitMs' ? ' more, beyond' : ', longer than'} the ${limitMs / 1000} s the client waits (${limit})`,
      cause ? { cause } : undefined,
    );
  }
}

const describeSeconds = (seconds: number) => (Number.isFinite(seconds) ? `${Math.ceil(seconds)} s` : 'forever');

/** fetch's "fetch failed" hides the useful part (ECONNREFUSED, socket hang up) in its cause. */
function describeCause(cause: unknown): string {
  const error = cause as { message?: string; cause?: { code?: string; message?: string } } | undefined;
  const inner = error?.cause;
  if (inner?.code || inner?.message) return `${error?.message ?? 'network error'} (${inner.code ?? inner.message})`;
  return error?.message ?? String(cause);
}
