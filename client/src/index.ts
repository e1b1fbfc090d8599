// coldtrack-api/client: a typed client of the ColdTrack partner API for servers (Node 18+, global
// fetch; no dependency on the service's code). Its method names are the OpenAPI operationIds
// (client/README.md, "Method names"). Every data endpoint, the token management and its audit trail, with
// types generated from the service's own OpenAPI document (openapi.ts); `paginate()` walks every
// record of a query page after page; requests of one token share its rate-limit budget and wait
// for it instead of being refused; 429 waits for X-RateLimit-Reset, 503 is retried after
// Retry-After with jittered backoff; 400/401/403/404 throw a ColdtrackApiError at once; every
// failure is a ColdtrackError with a `code` (errors.ts), and no message carries the token.
//
//   const client = new ColdtrackClient({ baseUrl: 'https://api.example.com', token: process.env.COLDTRACK_TOKEN! });
//   for await (const reading of client.paginate('sensorData', { aggregation: 'hourly', start_date: '2025-01-01', end_date: '2025-12-31' }))
//     console.log(reading.timestamp, reading.cooling_unit_id, reading.specification_type, reading.value);
import { type RateBudget, rateBudgetFor } from './rate-budget.js';
import { type CallOptions, Transport, type TransportOptions } from './transport.js';
import {
  type ApiToken,
  type AuditEventPage,
  type AuditEventQuery,
  type CoolingUnitPage,
  type CoolingUnitQuery,
  type CreatedApiToken,
  type CreateTokenRequest,
  DATA_PATHS,
  type DataEndpoint,
  type DataPage,
  type DataQuery,
  type Me,
  type PagedEndpoint,
  type PagedPage,
  type PagedQuery,
  type PagedRecord,
  type ApiTokenUsage,
  type RotatedApiToken,
  type RotateTokenRequest,
  SENSOR_BULK_PATH,
  type SensorBulkQuery,
  type SensorBulkSlice,
  SENSOR_CHANGES_PATH,
  type SensorChangesPage,
  type SensorChangesQuery,
  type TokenListQuery,
  type TokenPage,
  type TokenUsageQuery,
} from './types.js';

export {
  ColdtrackApiError,
  type ColdtrackClientErrorCode,
  ColdtrackError,
  type ColdtrackErrorCode,
  ColdtrackInvalidResponseError,
  ColdtrackNetworkError,
  ColdtrackRetryLaterError,
  ColdtrackTimeoutError,
} from './errors.js';
export { RateBudget, rateBudgetFor, type RateLimitState } from './rate-budget.js';
export { type CallOptions, type ClientEvent, DEFAULT_MAX_TOTAL_WAIT_MS, DEFAULT_MAX_WAIT_MS } from './transport.js';
export { verifyWebhook, type VerifyOptions, type WebhookEvent, WebhookVerificationError } from './webhooks.js';
export * from './types.js';
/** The generated OpenAPI types themselves, for shapes types.ts does not name. */
export type { components, paths } from './openapi.js';

export interface ColdtrackClientOptions extends Omit<TransportOptions, 'budget' | 'token' | 'baseUrl'> {
  /** e.g. https://api.coldtrack.example (a path prefix is kept) */
  baseUrl: string;
  /** an API token `ctk_...` (data endpoints) or a Registered Employee JWT (token management) */
  token: string;
  /** the token's shared budget; default: the one of this base URL and token in this process */
  budget?: RateBudget;
}

/** The largest page the service serves: the fewest requests out of the token's budget. */
export const MAX_PAGE_SIZE = 1000;

const TOKENS_PATH = '/api/v1/api-tokens';
const AUDIT_EVENTS_PATH = '/api/v1/audit-events';
const COOLING_UNITS_PATH = '/api/v1/cooling-units';
const PAGED_PATHS = { tokens: TOKENS_PATH, auditEvents: AUDIT_EVENTS_PATH } as const;
const tokenPath = (id: string, action = '') => `${TOKENS_PATH}/${encodeURIComponent(id)}${action}`;

export class ColdtrackClient {
  private readonly transport: Transport;

  constructor(options: ColdtrackClientOptions) {
    if (!options.baseUrl) throw new TypeError('ColdtrackClient: baseUrl is required');
    if (!options.token) throw new TypeError('ColdtrackClient: token is required');
    const budget = options.budget ?? rateBudgetFor(new URL(options.baseUrl).origin, options.token);
    this.transport = new Transport({ ...options, budget });
  }

  /** The token's rate-limit budget, as the service last reported it. */
  get budget(): RateBudget {
    return this.transport.budget;
  }

  /** One page of a data endpoint. */
  get<E extends DataEndpoint>(endpoint: E, query: DataQuery<E> = {}, options: CallOptions = {}): Promise<DataPage<E>> {
    return this.transport.call({ method: 'GET', path: DATA_PATHS[endpoint], query, ...options });
  }

  users(query: DataQuery<'users'> = {}, options?: CallOptions) {
    return this.get('users', query, options);
  }

  utilization(query: DataQuery<'utilization'> = {}, options?: CallOptions) {
    return this.get('utilization', query, options);
  }

  revenue(query: DataQuery<'revenue'> = {}, options?: CallOptions) {
    return this.get('revenue', query, options);
  }

  impact(query: DataQuery<'impact'> = {}, options?: CallOptions) {
    return this.get('impact', query, options);
  }

  sensorData(query: DataQuery<'sensorData'> = {}, options?: CallOptions) {
    return this.get('sensorData', query, options);
  }

  /**
   * Every page of a query, from `query.page` (default 1) until `has_next` is false. Where pages
   * carry a `next_cursor` (sensor history), each next page is asked for by it: the exact walk,
   * in which no record stored before the walk began is missed or repeated while others land
   * (docs/partners.md, "Walking a history that grows"); elsewhere by page number. page_size
   * defaults to the maximum (1,000): the fewest requests out of the token's budget.
   */
  async *pages<E extends PagedEndpoint>(
    endpoint: E,
    query: PagedQuery<E> = {} as PagedQuery<E>,
    options: CallOptions = {},
  ): AsyncGenerator<PagedPage<E>> {
    const path = endpoint in PAGED_PATHS ? PAGED_PATHS[endpoint as keyof typeof PAGED_PATHS] : DATA_PATHS[endpoint as DataEndpoint];
    let next: Record<string, unknown> = { page_size: MAX_PAGE_SIZE, ...query };
    for (let page = Number(next.page ?? 1); ; page++) {
      const body = await this.transport.call<PagedPage<E>>({ method: 'GET', path, query: next, ...options });
      yield body;
      const { has_next: hasNext, next_cursor: cursor } = body.meta.pagination as { has_next: boolean; next_cursor?: unknown };
      if (!hasNext || body.data.length === 0) return;
      const { page: _page, cursor: _cursor, ...filters } = next;
      next = typeof cursor === 'string' ? { ...filters, cursor } : { ...filters, page: page + 1 };
    }
  }

  /** Every record of a query, page after page (see pages()). */
  async *paginate<E extends PagedEndpoint>(endpoint: E, query?: PagedQuery<E>, options?: CallOptions): AsyncGenerator<PagedRecord<E>> {
    for await (const page of this.pages(endpoint, query, options)) yield* page.data as PagedRecord<E>[];
  }

  /** Token management: the client's token must be a Registered Employee's JWT. */
  readonly tokens = {
    /** The raw token is in this response only. Not retried on 503: a retry could create a second token. */
    create: (body: CreateTokenRequest, options: CallOptions = {}): Promise<CreatedApiToken> =>
      this.transport.call({ method: 'POST', path: TOKENS_PATH, body, idempotent: false, ...options }),
    list: (query: TokenListQuery = {}, options: CallOptions = {}): Promise<TokenPage> =>
      this.transport.call({ method: 'GET', path: TOKENS_PATH, query, ...options }),
    retrieve: (id: string, options: CallOptions = {}): Promise<ApiToken> =>
      this.transport.call({ method: 'GET', path: tokenPath(id), ...options }),
    revoke: (id: string, options: CallOptions = {}): Promise<ApiToken> =>
      this.transport.call({ method: 'POST', path: tokenPath(id, '/revoke'), idempotent: true, ...options }),
    /**
     * A replacement with the same scopes and units; the old token keeps working for the grace
     * period. Not retried on 503, like create.
     */
    rotate: (id: string, body: RotateTokenRequest = {}, options: CallOptions = {}): Promise<RotatedApiToken> =>
      this.transport.call({ method: 'POST', path: tokenPath(id, '/rotate'), body, idempotent: false, ...options }),
    /** Requests per UTC day by route and answer class (`from`/`to`: up to 90 days; default the last 30). */
    usage: (id: string, query: TokenUsageQuery = {}, options: CallOptions = {}): Promise<ApiTokenUsage> =>
      this.transport.call({ method: 'GET', path: tokenPath(id, '/usage'), query, ...options }),
  };

  /** The token audit trail (a Registered Employee's JWT): the company's events, newest first. */
  readonly auditEvents = {
    /** `token_id` follows a token either way round a rotation; one not of the company is 404. */
    list: (query: AuditEventQuery = {}, options: CallOptions = {}): Promise<AuditEventPage> =>
      this.transport.call({ method: 'GET', path: AUDIT_EVENTS_PATH, query, ...options }),
  };

  /** The company's live cooling units (a Registered Employee's JWT): the ids a token may be limited to. */
  readonly coolingUnits = {
    list: (query: CoolingUnitQuery = {}, options: CallOptions = {}): Promise<CoolingUnitPage> =>
      this.transport.call({ method: 'GET', path: COOLING_UNITS_PATH, query, ...options }),
  };

  /** The signed-in Registered Employee and their company (a Registered Employee's JWT). */
  /**
   * One page of the change feed: the spans of history that changed after `since` (an earlier
   * page's meta.pagination.next_cursor; "now": only the current cursor). Ask again with
   * next_cursor while has_next is true.
   */
  sensorDataChanges(query: SensorChangesQuery = {}, options: CallOptions = {}): Promise<SensorChangesPage> {
    return this.transport.call({ method: 'GET', path: SENSOR_CHANGES_PATH, query, ...options });
  }

  /**
   * One slice of a bulk pull (GET /api/v1/sensor-data/bulk): whole days of the window, about
   * `max_records` records, as a stream of CSV or NDJSON bytes to read to the end; `next` is the
   * query of the following slice (null after the last). A slice that broke off is asked for again
   * with the same query. One request of the token's budget each.
   */
  async sensorDataBulk(query: SensorBulkQuery = {}, options: CallOptions = {}): Promise<SensorBulkSlice> {
    const response = await this.transport.call<Response>({ method: 'GET', path: SENSOR_BULK_PATH, query, stream: true, ...options });
    const link = /<[^>]*\?([^>]*)>;\s*rel="next"/.exec(response.headers.get('link') ?? '');
    return {
      body: response.body ?? new Response('').body!,
      start: response.headers.get('x-slice-start') ?? '',
      end: response.headers.get('x-slice-end') ?? '',
      countedRecords: Number(response.headers.get('x-slice-records-counted') ?? 0),
      next: link ? (Object.fromEntries(new URLSearchParams(link[1])) as SensorBulkQuery) : null,
    };
  }

  me(options: CallOptions = {}): Promise<Me> {
    return this.transport.call({ method: 'GET', path: '/api/v1/me', ...options });
  }
}
