// GET /api/v1/sensor-data/bulk: a window of sensor history (any number of the token's units) as
// one streamed file, CSV or NDJSON (compressed) or Parquet, for a copy made in minutes instead of
// hours of pages. One slice of whole days per request (about max_records records): the Link header names
// the next slice, and a slice that broke off is asked for again. The records, their order and
// values are GET /api/v1/sensor-data's; pair it with the change feed as a walk is
// (docs/partners.md, "Bulk history"). The streaming itself is src/sensors/bulk.ts, Parquet's
// encoding src/sensors/bulk-parquet.ts.
import zlib from 'node:zlib';
import { pipeline } from 'node:stream';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { dateParam, formatDay, MAX_SENSOR_WINDOW_DAYS, resolveWindow } from '../../data-surface/window.js';
import { ApiError, unavailable } from '../../http/errors.js';
import { errorResponses, idQuery, queryInteger } from '../../http/schemas.js';
import { BULK_FORMATS, type BulkQuery, CONTENT_TYPES, CSV_HEADER, planSlice, streamSlice } from '../../sensors/bulk.js';
import { createParquetEncoder } from '../../sensors/bulk-parquet.js';
import { AGGREGATIONS } from '../../sensors/day-counts.js';
import { SPECIFICATION_TYPES } from '../../sensors/formats.js';
import { createVersions } from '../../sensors/versions.js';
import { DAY_MS, MINUTE_MS } from '../../time.js';
import type { App } from '../../types.js';
import { specificationTypes } from './history.js';

/**
 * Streams at once on one process, and of one token across every process sharing Redis (on each
 * process without it, or while Redis does not answer): docs/operations.md, "Bulk streams".
 */
export const BULK_STREAMS_PER_PROCESS = 2;
export const BULK_STREAMS_PER_TOKEN = 1;
/** The longest a slice's statement may run: a pull is not a page. */
export const BULK_STATEMENT_TIMEOUT_MS = 15 * MINUTE_MS;
export const DEFAULT_SLICE_RECORDS = 1_000_000;
export const MAX_SLICE_RECORDS = 5_000_000;

const bulkQuery = {
  start_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC), from 0001-01-01; default end_date - 29 days'),
  end_date: dateParam.optional().describe('YYYY-MM-DD, inclusive (UTC), up to 9999-12-31; default today; must not be before start_date'),
  aggregation: z
    .enum(AGGREGATIONS, { error: 'must be hourly or daily (or raw, the default)' })
    .default('raw')
    .describe(`raw, hourly or daily, as GET /api/v1/sensor-data; longest window ${MAX_SENSOR_WINDOW_DAYS.raw} days, 3,660 with daily`),
  specification_type: specificationTypes.optional().describe('TEMPERATURE, HUMIDITY or TEMPERATURE,HUMIDITY (default both)'),
  cooling_unit_id: idQuery().optional().describe('Only this unit (404 when the token may not read it); default every unit it may read'),
  location_id: idQuery().optional().describe('Only units at this location'),
  format: z
    .enum(BULK_FORMATS, { error: 'must be csv, ndjson or parquet' })
    .default('csv')
    .describe('csv (with a header line), ndjson, or parquet (one file, ZSTD-compressed row groups)'),
  max_records: queryInteger(1, MAX_SLICE_RECORDS)
    .default(DEFAULT_SLICE_RECORDS)
    .describe(
      'About how many records a response holds: whole days up to this many (the first day always); ' +
        'the Link header (rel="next") names the next slice of the window',
    ),
};

/** What the client accepts, best first: zstd, gzip, or nothing. */
function encodingFor(acceptEncoding: string | undefined): 'zstd' | 'gzip' | null {
  const accepted = new Map(
    (acceptEncoding ?? '').split(',').map((part) => {
      const [name = '', ...parameters] = part.trim().toLowerCase().split(';');
      const q = parameters.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean);
      return [name.trim(), q === undefined ? 1 : Number(q)] as const;
    }),
  );
  const allowed = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  if (allowed('zstd')) return 'zstd';
  if (allowed('gzip')) return 'gzip';
  return null;
}

const compressor = (encoding: 'zstd' | 'gzip') =>
  encoding === 'zstd'
    ? zlib.createZstdCompress({ params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } })
    : zlib.createGzip({ level: 3 });

export default async function sensorBulkRoute(app: App) {
  let streams = 0;
  // one thread encodes every stream the process admits, side by side (a stream waiting on its
  // client or its COPY holds no thread): a thread and its wasm memory cost a worker more than a
  // stream does; the thread starts with the first Parquet pull
  const parquet = createParquetEncoder({ threads: 1, streamsPerThread: BULK_STREAMS_PER_PROCESS, heapLimitMb: app.config.heapLimitMb });
  app.addHook('onClose', () => parquet.close());
  // With a replica, a slice (it has no position) must hold everything the primary had committed
  // when it was asked for, as a page without a cursor must (src/routes/sensor-data/history.ts):
  // one single-row statement on the primary per slice; a replica behind it leaves the slice to the primary.
  const primaryVersions = app.readRouting.settings().replica ? createVersions(app.db) : null;

  app.get('/sensor-data/bulk', {
    config: { scope: 'sensor_data' },
    // compressed here, as a stream: @fastify/compress would buffer nothing but also choose brotli
    compress: false,
    // a slice is a stream sent as it is; errors are the app's JSON
    serializerCompiler: (route) =>
      String(route.httpStatus) === '200'
        ? (data) => String(data)
        : zodSerializerCompiler(route as unknown as Parameters<typeof zodSerializerCompiler>[0]),
    schema: {
      operationId: 'sensorDataBulk',
      summary: 'A window of sensor history as one streamed CSV, NDJSON or Parquet file, a slice of whole days at a time',
      tags: ['Sensor data'],
      security: [{ apiToken: [] }],
      querystring: z.strictObject(bulkQuery),
      response: {
        200: {
          description:
            'The slice: CSV (header line first) or NDJSON, zstd- or gzip-encoded when accepted; or a Parquet file, never encoded (its pages are compressed)',
          content: {
            'text/csv': { schema: z.string().describe(`${CSV_HEADER}, then a record a line`) },
            'application/x-ndjson': { schema: z.string().describe('a SensorRecord as JSON a line') },
            [CONTENT_TYPES.parquet]: {
              schema: z.string().meta({
                format: 'binary',
                description: `a Parquet file: the columns ${CSV_HEADER}; timestamp in microseconds (UTC), min and max null for raw readings`,
              }),
            },
          },
        },
        ...errorResponses(400, 401, 403, 404, 429, 503),
      },
    },
    handler: async (request, reply) => {
      const query = request.query;
      const window = resolveWindow(query, app.clock.now(), MAX_SENSOR_WINDOW_DAYS[query.aggregation]);
      const types = SPECIFICATION_TYPES.filter((type) => (query.specification_type ?? SPECIFICATION_TYPES).includes(type));
      const bulk: BulkQuery = {
        unitIds: request.unitScope.unitIds,
        types,
        fromMs: window.start,
        toMs: window.end + DAY_MS,
        aggregation: query.aggregation,
        format: query.format,
      };
      const tokenBusy = () =>
        new ApiError(
          429,
          'rate_limited',
          `At most ${BULK_STREAMS_PER_TOKEN} bulk stream of a token at a time; retry when it ends`,
          undefined,
          {
            'retry-after': '5',
          },
        );
      // the token's streams here, the server's cap, then the token's lease: across every process
      // with Redis, this one's alone without it (src/rate-limit/stream-leases.ts)
      if (app.streamLeases.heldHere(request.apiToken.id) >= BULK_STREAMS_PER_TOKEN) throw tokenBusy();
      if (streams >= BULK_STREAMS_PER_PROCESS) throw unavailable('database', 5);
      streams++;
      const lease = await app.streamLeases.acquire(request.apiToken.id, BULK_STREAMS_PER_TOKEN).catch((error: unknown) => {
        streams--;
        throw error;
      });
      if (!lease) {
        streams--;
        throw tokenBusy();
      }
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        streams--;
        lease.release();
      };
      let slice;
      let stream;
      try {
        const minHead = primaryVersions ? (await primaryVersions.feed()).head : null;
        slice = await planSlice(app.readDb, bulk, query.max_records);
        const sliced = { ...bulk, fromMs: slice.fromMs, toMs: slice.toMs };
        stream =
          (await app.readRouting.run((target) =>
            streamSlice(target.pool, sliced, BULK_STATEMENT_TIMEOUT_MS, target.onReplica ? minHead : null),
          )) ?? (await streamSlice(app.db, sliced, BULK_STATEMENT_TIMEOUT_MS));
      } catch (error) {
        release();
        throw error;
      }
      // the slot is free once the slice is sent (its commit may still be under way): a client that
      // asks for the next slice at once is not refused for the one it just read. A Parquet file is
      // sent once its thread has encoded the last row group, after its COPY ended
      const file = query.format === 'parquet' ? parquet.encode(stream.body) : null;
      (file ?? stream.body).once('close', release);
      void stream.done.finally(() => {
        if (!file) release();
      });

      const last = formatDay(slice.toMs - DAY_MS);
      reply.header('content-type', CONTENT_TYPES[query.format]);
      reply.header('content-disposition', `attachment; filename="sensor-data-${formatDay(slice.fromMs)}-${last}.${query.format}"`);
      reply.header('x-slice-start', formatDay(slice.fromMs));
      reply.header('x-slice-end', last);
      reply.header('x-slice-records-counted', String(slice.estimatedRecords));
      if (slice.toMs < bulk.toMs) {
        const next = new URLSearchParams();
        for (const [key, value] of Object.entries(request.query)) if (value !== undefined) next.set(key, String(value));
        next.set('start_date', formatDay(slice.toMs));
        next.set('end_date', formatDay(window.end));
        reply.header('link', `</api/v1/sensor-data/bulk?${next.toString()}>; rel="next"`);
      }
      // a stream is sent as it is, never serialized: the 200 schema above documents its bytes
      if (file) return reply.send(file as never);
      reply.header('vary', 'accept-encoding');
      const encoding = encodingFor(request.headers['accept-encoding']);
      if (!encoding) return reply.send(stream.body as never);
      reply.header('content-encoding', encoding);
      const encoded = compressor(encoding);
      pipeline(stream.body, encoded, () => {});
      return reply.send(encoded as never);
    },
  });
}
