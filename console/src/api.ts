// The management API as the console calls it: the signed-in employee's JWT on every call, JSON in
// and out, and every failure turned into one sentence a person can act on (ConsoleError).
import type {
  ApiToken,
  ApiTokenUsage,
  ApiTokenUsageDay,
  AuditEvent,
  AuditEventPage,
  components,
  CreatedApiToken,
  Me,
  TokenPage,
} from '@coldtrack/client';

// The shapes come from the OpenAPI document through the partner client's generated types
// (@coldtrack/client, the client/ workspace: client/src/types.ts, `npm run generate:client`): a field the service adds or renames fails the
// console's typecheck instead of drifting. Type-only imports: nothing of the client is bundled.
export type { ApiToken, ApiTokenUsage, ApiTokenUsageDay, AuditEvent, AuditEventPage, Me };
/** A created or rotated token: the only answers that carry the raw secret. */
export type NewToken = CreatedApiToken;
export type Scope = ApiToken['scopes'][number];
export type CoolingUnit = components['schemas']['CoolingUnit'];
export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
export type WebhookEventType = WebhookEndpoint['event_types'][number];
/** A registered endpoint, or one whose secret was just rotated: the only answers with the secret. */
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
/** A page of the management lists: the token list's envelope (the units list has the same). */
export type Page<T> = Omit<TokenPage, 'data'> & { data: T[] };

/** Every scope, in the order the form offers them. */
export const SCOPES = ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] as const satisfies readonly Scope[];

export class ConsoleError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }

  /** The JWT is expired or invalid: the console forgets it and asks for a new one. */
  get signedOut() {
    return this.status === 401;
  }
}

export const SESSION_ENDED = 'Your session has expired or is invalid: sign in again.';
export const NOT_AN_EMPLOYEE =
  'This account is not a Registered Employee: only a Registered Employee of the company can manage its API tokens.';

/** Seconds to wait, from Retry-After (seconds) or else X-RateLimit-Reset (a Unix time). */
function secondsToWait(headers: Headers): number {
  const retryAfter = Number(headers.get('retry-after'));
  if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.ceil(retryAfter);
  const reset = Number(headers.get('x-ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - Date.now() / 1000));
  return 5;
}

function describe(status: number, headers: Headers, message: string | undefined): string {
  switch (status) {
    case 401:
      return SESSION_ENDED;
    case 403:
      return NOT_AN_EMPLOYEE;
    case 429:
      return `Too many requests: wait ${secondsToWait(headers)} s and try again.`;
    case 503:
      return `The service is temporarily unavailable, try again in ${secondsToWait(headers)} s.`;
    default:
      // 400 (the field at fault), 404, 409 (why the token cannot be rotated): the service's words
      return message ? `${message.replace(/\.$/, '')}.` : `The request failed (HTTP ${status}).`;
  }
}

export type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export async function call<T>(jwt: string, method: Method, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers: { authorization: `Bearer ${jwt}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch {
    throw new ConsoleError('Could not reach the service: check your connection and try again.', 0);
  }
  if (response.status === 204) return undefined as T; // a deletion: no body
  if (response.ok) return (await response.json()) as T;
  const error = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
  throw new ConsoleError(describe(response.status, response.headers, error?.error?.message), response.status);
}
