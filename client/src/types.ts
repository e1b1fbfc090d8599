// The client's request and record types, read off the generated OpenAPI types (openapi.ts): when
// a route's schema changes, regenerating changes these, and code that no longer fits stops compiling.
import type { components, paths } from './openapi.js';

type Schemas = components['schemas'];
type Operation<P extends keyof paths, M extends 'get' | 'post'> = NonNullable<paths[P][M]>;
type QueryOf<O> = O extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type ResponseOf<O, S extends number> = O extends { responses: { [K in S]: infer R } } ? JsonBody<R> : never;
type RequestBodyOf<O> = O extends { requestBody?: infer B } ? JsonBody<NonNullable<B>> : never;

export type SpecificationType = Schemas['SensorRecord']['specification_type'];

/**
 * Query parameters as a caller writes them: the document types integers as text (the query
 * string is text); numbers are welcome, and specification_type also takes a list.
 */
export type ClientQuery<Q> = {
  [K in keyof Q]?: K extends 'page' | 'page_size' | 'cooling_unit_id' | 'location_id' | 'max_records'
    ? Q[K] | number
    : K extends 'specification_type'
      ? Q[K] | readonly SpecificationType[]
      : Q[K];
};

/** The data endpoints by method name, and their paths. */
export const DATA_PATHS = {
  users: '/api/v1/analytics/users',
  utilization: '/api/v1/analytics/utilization',
  revenue: '/api/v1/analytics/revenue',
  impact: '/api/v1/analytics/impact',
  sensorData: '/api/v1/sensor-data',
} as const satisfies Record<string, keyof paths>;

export type DataEndpoint = keyof typeof DATA_PATHS;
type DataOperation<E extends DataEndpoint> = Operation<(typeof DATA_PATHS)[E], 'get'>;

export type DataQuery<E extends DataEndpoint> = ClientQuery<QueryOf<DataOperation<E>>>;
/** The envelope: `{ data, meta: { company_id, filters, pagination } }` */
export type DataPage<E extends DataEndpoint> = ResponseOf<DataOperation<E>, 200>;
export type DataRecord<E extends DataEndpoint> = DataPage<E>['data'][number];

export type UsersRecord = Schemas['UsersRecord'];
export type UtilizationRecord = Schemas['UtilizationRecord'];
export type RevenueRecord = Schemas['RevenueRecord'];
export type ImpactRecord = Schemas['ImpactRecord'];
export type SensorRecord = Schemas['SensorRecord'];

// the change feed: spans of sensor history that changed since a cursor (paged by cursor, not by page number)
export const SENSOR_CHANGES_PATH = '/api/v1/sensor-data/changes' satisfies keyof paths;
export type SensorChange = Schemas['SensorChange'];
export type SensorChangesQuery = ClientQuery<QueryOf<Operation<typeof SENSOR_CHANGES_PATH, 'get'>>>;
export type SensorChangesPage = ResponseOf<Operation<typeof SENSOR_CHANGES_PATH, 'get'>, 200>;
export type ApiErrorBody = Schemas['Error'];

// bulk history: a window of many units' history as one streamed CSV or NDJSON file, a slice of whole days at a time
export const SENSOR_BULK_PATH = '/api/v1/sensor-data/bulk' satisfies keyof paths;
export type SensorBulkQuery = ClientQuery<QueryOf<Operation<typeof SENSOR_BULK_PATH, 'get'>>>;
/** One slice of a bulk pull: its bytes (decoded: the client asks for gzip), its days, and the query of the next slice. */
export interface SensorBulkSlice {
  body: ReadableStream<Uint8Array>;
  /** the slice's first and last day (YYYY-MM-DD) */
  start: string;
  end: string;
  /** records the slice held when counted (a few more may have landed since) */
  countedRecords: number;
  /** the query of the window's next slice; null after the last */
  next: SensorBulkQuery | null;
}

// management (a Registered Employee's JWT)
type TokensPath = '/api/v1/api-tokens';
export type ApiToken = Schemas['ApiToken'];
export type CreateTokenRequest = RequestBodyOf<Operation<TokensPath, 'post'>>;
/** The token object with the raw `token`, which only this response carries. */
export type CreatedApiToken = ResponseOf<Operation<TokensPath, 'post'>, 201>;
export type TokenListQuery = ClientQuery<QueryOf<Operation<TokensPath, 'get'>>>;
export type TokenPage = ResponseOf<Operation<TokensPath, 'get'>, 200>;
export type RotateTokenRequest = NonNullable<RequestBodyOf<Operation<'/api/v1/api-tokens/{token_id}/rotate', 'post'>>>;
/** The replacement token, with its raw `token` (shown once). */
export type RotatedApiToken = ResponseOf<Operation<'/api/v1/api-tokens/{token_id}/rotate', 'post'>, 201>;
type TokenUsagePath = '/api/v1/api-tokens/{token_id}/usage';
export type TokenUsageQuery = ClientQuery<QueryOf<Operation<TokenUsagePath, 'get'>>>;
/** A token's requests per UTC day, by route and answer class, and its last client. */
export type ApiTokenUsage = Schemas['ApiTokenUsage'];
export type ApiTokenUsageDay = ApiTokenUsage['days'][number];

// the token audit trail and the signed-in employee (a Registered Employee's JWT)
type AuditEventsPath = '/api/v1/audit-events';
export type AuditEvent = Schemas['AuditEvent'];
export type AuditAction = AuditEvent['action'];
export type AuditEventQuery = ClientQuery<QueryOf<Operation<AuditEventsPath, 'get'>>>;
export type AuditEventPage = ResponseOf<Operation<AuditEventsPath, 'get'>, 200>;
export type Me = Schemas['Me'];

// the company's live cooling units, for choosing a token's units (a Registered Employee's JWT)
type CoolingUnitsPath = '/api/v1/cooling-units';
export type CoolingUnitQuery = ClientQuery<QueryOf<Operation<CoolingUnitsPath, 'get'>>>;
export type CoolingUnitPage = ResponseOf<Operation<CoolingUnitsPath, 'get'>, 200>;
export type CoolingUnit = CoolingUnitPage['data'][number];

/** Everything `pages()` and `paginate()` walk: the data endpoints, the token list and the audit trail. */
export type PagedEndpoint = DataEndpoint | 'tokens' | 'auditEvents';
export type PagedQuery<E extends PagedEndpoint> = E extends DataEndpoint
  ? DataQuery<E>
  : E extends 'tokens'
    ? TokenListQuery
    : AuditEventQuery;
export type PagedPage<E extends PagedEndpoint> = E extends DataEndpoint ? DataPage<E> : E extends 'tokens' ? TokenPage : AuditEventPage;
export type PagedRecord<E extends PagedEndpoint> = PagedPage<E>['data'][number];
