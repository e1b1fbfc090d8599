// An answer's body read as what it claims to be: a refusal's error object becomes a
// ColdtrackApiError (its messages redacted of tokens, redact.ts), a success body must be JSON or
// nothing (else ColdtrackInvalidResponseError): nothing from the wire is trusted.
import { ColdtrackApiError, ColdtrackInvalidResponseError } from './errors.js';
import { retryAfterSeconds } from './rate-limit-headers.js';
import { redactValue } from './redact.js';

type ErrorBody = { error?: { code?: unknown; message?: unknown; details?: unknown } };

export function apiErrorOf(response: Response, request: string, text: string, redact: (text: string) => string): ColdtrackApiError {
  let body: ErrorBody | undefined;
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    body = undefined;
  }
  const error = body !== null && typeof body === 'object' ? body.error : undefined;
  const string = (value: unknown) => (typeof value === 'string' && value !== '' ? redact(value) : undefined);
  const details = error?.details !== null && typeof error?.details === 'object' ? (error.details as Record<string, unknown>) : undefined;
  return new ColdtrackApiError(
    response.status,
    string(error?.code) ?? `http_${response.status}`,
    string(error?.message) ?? `${request}: HTTP ${response.status}`,
    details && redactValue(details, redact),
    request,
    string(response.headers.get('x-request-id')) ?? null,
    retryAfterSeconds(response.headers),
  );
}

/** A success body: JSON, or nothing at all; anything else is not an answer of the API. */
export function successBody<T>(response: Response, request: string, text: string): T {
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ColdtrackInvalidResponseError(
      request,
      response.status,
      response.headers.get('content-type'),
      response.headers.get('x-request-id'),
      'a body that is not JSON',
    );
  }
}
