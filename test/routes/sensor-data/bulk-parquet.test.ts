// GET /api/v1/sensor-data/bulk?format=parquet: in both storage profiles (test/helpers/sensor-world.ts)
// the file, read back with an independent reader (hyparquet), holds the records of the CSV slice
// (instants to the microsecond, values, min and max null for raw readings), typed, with the UTC
// timestamp type and ZSTD pages, never HTTP-encoded; slices name the next as CSV's do. Over real
// HTTP (the export world, grown to a million readings), a pull the client drops half-way, or
// whose database connection dies, or whose thread ends under it, is cut, not ended, and leaves no
// connection, COPY, thread task or stream slot behind; the thread starts with the first Parquet
// pull (below the event loop's priority, on Linux) and ends with the app, encodes a million
// records without its memory outside the V8 heap (buffers, the wasm memory) growing with them, and
// takes two pulls at once, each file whole.
import type { Worker } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t from 'tap';
import { parquetMetadata, parquetReadObjects, type FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { ColdtrackClient } from '@coldtrack/client';
import { parquetPoolsOpen, parquetTasksRunning } from '../../../src/sensors/bulk-parquet.js';
import { createTestApp } from '../../helpers/app.js';
import { createSensorWorld, eachProfile, type SensorWorld } from '../../helpers/sensor-world.js';
import { createExportWorld } from '../../client/world.js';
import { threads } from '../../helpers/threads.js';

type Row = Record<string, unknown>;

/** The Parquet thread's memory outside its V8 heap, at most (test below). */
const EXTERNAL_BOUND_MB = 40;

/** An instant in microseconds since 1970 as the pages write it (sensor_timestamp_text). */
function instantText(micros: bigint): string {
  const seconds = micros / 1_000_000n;
  const fraction = micros % 1_000_000n;
  const text = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return fraction === 0n ? `${text}Z` : `${text}.${String(fraction).padStart(6, '0')}Z`;
}

async function readParquet(bytes: Buffer): Promise<{ rows: Row[]; metadata: FileMetaData }> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const metadata = parquetMetadata(file);
  // the instants as the file stores them (hyparquet's default is a Date, which keeps milliseconds)
  const rows = (await parquetReadObjects({ file, compressors, parsers: { timestampFromMicroseconds: (micros) => micros } })) as Row[];
  return { rows, metadata };
}

/** A file's rows as the CSV's records: the instant as text, null min and max left out (as CSV's empty cells). */
function asRecords(rows: Row[]): Row[] {
  return rows.map((row) => {
    const record: Row = {};
    for (const [name, value] of Object.entries(row)) {
      if (value === null) continue;
      record[name] = name === 'timestamp' ? instantText(value as bigint) : value;
    }
    return record;
  });
}

const csvRecords = (text: string) => {
  const [header, ...lines] = text.trimEnd().split('\n');
  const names = header!.split(',');
  return lines.map((line) => {
    const cells = line.split(',');
    const record: Row = {};
    names.forEach((name, i) => {
      const cell = cells[i]!;
      if (cell === '') return;
      record[name] = name === 'timestamp' || name === 'specification_type' ? cell : Number(cell);
    });
    return record;
  });
};

/** Reads a body to its end: `ending` settles 'ended', or rejects when the body is cut; `bytes()` so far. */
function readToTheEnd(reader: ReadableStreamDefaultReader<Uint8Array>) {
  let bytes = 0;
  const ending = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return 'ended';
      bytes += value.length;
    }
  })();
  return { ending, bytes: () => bytes };
}

async function bulk(world: SensorWorld, query: string, headers: Record<string, string> = world.all.headers) {
  return world.ctx.app.inject({ method: 'GET', url: `/api/v1/sensor-data/bulk?${query}`, headers });
}

eachProfile(t, async (t, profile) => {
  const world = await createSensorWorld(t, profile);
  const window = 'start_date=2026-03-01&end_date=2026-03-15';
  // a reading with microseconds, which a millisecond anywhere on the way would lose
  await world.load(`cooling_unit_id,specification_type,recorded_at,value\n${world.a2},HUMIDITY,2026-03-14T10:20:30.123457Z,61.5\n`);

  await t.test('the records of the CSV slice, typed, in every aggregation', async (t) => {
    for (const aggregation of ['raw', 'hourly', 'daily']) {
      const csv = await bulk(world, `${window}&aggregation=${aggregation}&format=csv`);
      const expected = csvRecords(csv.body);
      t.ok(expected.length > 10, `${aggregation}: ${expected.length} records`);
      const response = await bulk(world, `${window}&aggregation=${aggregation}&format=parquet`, {
        ...world.all.headers,
        'accept-encoding': 'zstd, gzip',
      });
      t.equal(response.statusCode, 200);
      t.equal(response.headers['content-type'], 'application/vnd.apache.parquet');
      t.equal(response.headers['content-encoding'], undefined, 'no HTTP encoding: the pages are compressed');
      t.equal(
        response.headers['content-disposition'],
        `attachment; filename="sensor-data-${csv.headers['x-slice-start']}-${csv.headers['x-slice-end']}.parquet"`,
      );
      for (const header of ['x-slice-start', 'x-slice-end', 'x-slice-records-counted']) {
        t.equal(response.headers[header], csv.headers[header], `${header} as CSV's`);
      }
      t.equal(response.rawPayload.subarray(0, 4).toString('latin1'), 'PAR1', 'a Parquet file');
      const { rows, metadata } = await readParquet(response.rawPayload);
      t.same(asRecords(rows), expected, `${aggregation}: the CSV's records, values and order`);
      t.equal(Number(metadata.num_rows), expected.length, 'the footer counts them');
      const first = rows[0]!;
      t.equal(typeof first.timestamp, 'bigint', 'timestamp: an int64');
      t.ok(Number.isInteger(first.cooling_unit_id) && Number.isInteger(first.sample_count), 'unit and sample count: integers');
      t.equal(typeof first.value, 'number');
      if (aggregation === 'raw') {
        t.ok(
          rows.every((row) => row.min === null && row.max === null && row.sample_count === 1),
          'raw: min and max null, one sample',
        );
        const precise = rows.filter((row) => row.timestamp === 1_773_483_630_123_457n);
        t.same(
          precise.map((row) => [row.cooling_unit_id, row.specification_type, row.value]),
          [[world.a2, 'HUMIDITY', 61.5]],
          'the reading at .123457 s, to the microsecond',
        );
      } else {
        t.ok(
          rows.every((row) => typeof row.min === 'number' && typeof row.max === 'number'),
          `${aggregation}: min and max present`,
        );
      }
    }
  });

  await t.test("the file's schema: UTC microseconds, dictionary labels, ZSTD pages", async (t) => {
    const { metadata } = await readParquet((await bulk(world, `${window}&format=parquet`)).rawPayload);
    const columns = Object.fromEntries(metadata.schema.slice(1).map((element) => [element.name, element]));
    t.same(Object.keys(columns), ['timestamp', 'cooling_unit_id', 'specification_type', 'value', 'sample_count', 'min', 'max']);
    t.match(columns.timestamp, {
      type: 'INT64',
      repetition_type: 'REQUIRED',
      logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
    });
    t.match(columns.cooling_unit_id, { type: 'INT32', repetition_type: 'REQUIRED' });
    t.match(columns.specification_type, { type: 'BYTE_ARRAY', logical_type: { type: 'STRING' } });
    t.match(columns.value, { type: 'DOUBLE', repetition_type: 'REQUIRED' });
    t.match(columns.sample_count, { type: 'INT32', repetition_type: 'REQUIRED' });
    t.match(columns.min, { type: 'DOUBLE', repetition_type: 'OPTIONAL' });
    t.match(columns.max, { type: 'DOUBLE', repetition_type: 'OPTIONAL' });
    const chunks = metadata.row_groups.flatMap((group) => group.columns.map((column) => column.meta_data!));
    t.ok(chunks.length >= 7);
    t.same([...new Set(chunks.map((chunk) => chunk.codec))], ['ZSTD'], 'every column chunk ZSTD-compressed');
    const timestamps = chunks.find((chunk) => chunk.path_in_schema[0] === 'timestamp')!;
    t.ok(timestamps.encodings.includes('DELTA_BINARY_PACKED'), `timestamps: ${timestamps.encodings.join(', ')}`);
  });

  await t.test('slices of whole days, each naming the next in Parquet, together the CSV window', async (t) => {
    const expected = csvRecords((await bulk(world, `${window}&aggregation=hourly&format=csv`)).body);
    const records: Row[] = [];
    const slices: string[] = [];
    let url: string | undefined = `${window}&aggregation=hourly&max_records=500&format=parquet`;
    while (url) {
      const response = await bulk(world, url);
      t.equal(response.statusCode, 200);
      t.match(response.headers['content-disposition'], /\.parquet"$/);
      slices.push(`${response.headers['x-slice-start']}..${response.headers['x-slice-end']}`);
      records.push(...asRecords((await readParquet(response.rawPayload)).rows));
      const link = response.headers.link as string | undefined;
      if (link) t.match(link, /format=parquet/, 'the next slice in the same format');
      url = link ? /<\/api\/v1\/sensor-data\/bulk\?([^>]+)>; rel="next"/.exec(link)![1] : undefined;
    }
    t.ok(slices.length >= 3, `${slices.length} slices: ${slices.join(', ')}`);
    t.same(records, expected, 'the slices in turn hold the window, each record once');
  });

  await t.test('an empty slice is a valid file of no rows', async (t) => {
    const response = await bulk(world, 'start_date=2026-01-01&end_date=2026-01-02&format=parquet');
    t.equal(response.statusCode, 200);
    const { rows, metadata } = await readParquet(response.rawPayload);
    t.same(rows, []);
    t.equal(Number(metadata.num_rows), 0);
  });

  const offLinux = process.platform === 'linux' ? false : 'thread priorities are read from /proc';
  await t.test('the encoding thread runs at nice 10, below the event loop', { skip: offLinux }, async (t) => {
    const all = threads();
    const own = all.find((thread) => thread.task === process.pid)!.nice;
    t.ok(own < 10, `the event loop's thread keeps its own priority (nice ${own})`);
    t.ok(
      all.some((thread) => thread.task !== process.pid && thread.nice === 10),
      `a thread at nice 10 after the pulls above (the threads' nice values: ${[...new Set(all.map((thread) => thread.nice))].join(', ')})`,
    );
  });

  await t.test('every connection a pull took is back, every thread task ended', async (t) => {
    const pool = world.ctx.app.db;
    for (let waited = 0; (pool.totalCount !== pool.idleCount || parquetTasksRunning() > 0) && waited < 2000; waited += 50) {
      await sleep(50);
    }
    t.equal(pool.totalCount - pool.idleCount, 0, `${pool.totalCount} connections, ${pool.idleCount} idle`);
    t.equal(parquetTasksRunning(), 0, 'no Parquet task left');
  });
});

t.test('over HTTP: a pull cut half-way, by the client or the database, leaves nothing behind', async (t) => {
  const world = await createExportWorld(t);
  t.equal(parquetPoolsOpen(), 0, 'an app that served no Parquet pull started no thread');
  // the threads started from here on: the Parquet pulls' (the world has no other)
  const threads: Worker[] = [];
  const started = (worker: Worker) => threads.push(worker);
  process.on('worker', started);
  t.teardown(() => process.off('worker', started));
  // twenty days of 10-second readings of A's three units in 2024 (a million records, their values
  // all different): a file of several row groups, more than the socket buffers hold
  // a client of its own: the test pool's deadline is a page's
  const loader = new pg.Client({ connectionString: world.db.url });
  await loader.connect();
  const { rowCount } = await loader.query(
    `INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
     SELECT unit, type::specification_type, at, random() * 10
     FROM unnest($1::int[]) AS unit, unnest('{TEMPERATURE,HUMIDITY}'::text[]) AS type,
          generate_series('2024-06-01'::timestamptz, '2024-06-20 23:59:50', '10 seconds') AS at`,
    [world.unitIds],
  );
  await loader.end();
  t.equal(rowCount, 3 * 2 * 20 * 8640);
  const client = new ColdtrackClient({ baseUrl: world.baseUrl, token: world.token });
  const query = { start_date: '2024-06-01', end_date: '2024-06-20', format: 'parquet', max_records: 5_000_000 } as const;
  const copies = async () =>
    (
      await world.db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY%' AND pid <> pg_backend_pid()",
      )
    ).rows[0]!.n;
  /** What a pull left behind once all of it is back (or, after 15 s, what is still held). */
  type Leftovers = { connections: number; tasks: number; copies: number };
  const leftovers = async (): Promise<Leftovers> => {
    const pool = world.ctx.app.db;
    return { connections: pool.totalCount - pool.idleCount, tasks: parquetTasksRunning(), copies: await copies() };
  };
  // The service's own background work (usage and last-used flushes, the webhook dispatcher) takes
  // a pool connection for a moment at any time: a leak is a connection that never comes back, so
  // the checks read the first moment all is back, not one later instant that may catch such a flush.
  const settled = async (): Promise<Leftovers> => {
    // returns as soon as all is back; the bound only has to outlast a loaded machine (the COPY
    // backend's end, the thread's abort and the pool's release each wait on a busy CPU)
    let left = await leftovers();
    for (let waited = 0; waited < 15_000 && (left.connections || left.tasks || left.copies); waited += 50) {
      await sleep(50);
      left = await leftovers();
    }
    if (left.connections || left.tasks || left.copies) {
      // not settled (a rare failure under load): what was still held, for whoever looks next
      const { rows: sessions } = await world.db.pool.query<{ state: string; query: string }>(
        'SELECT state, left(query, 60) AS query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      t.comment(`not settled after 15 s: ${JSON.stringify(left)}; server sessions ${JSON.stringify(sessions)}`);
    }
    return left;
  };

  await t.test('the whole file, to the last record, in bounded memory', async (t) => {
    // the thread's external memory (ArrayBuffers and the wasm memory) as the pull goes
    let peak = 0;
    const sampling = setInterval(() => {
      for (const thread of threads)
        void thread.getHeapStatistics().then(
          (heap) => (peak = Math.max(peak, heap.external_memory)),
          () => {},
        );
    }, 10);
    const slice = await client.sensorDataBulk(query);
    const bytes = Buffer.from(await new Response(slice.body).arrayBuffer());
    clearInterval(sampling);
    const metadata = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    t.equal(Number(metadata.num_rows), rowCount, `${rowCount} records, ${bytes.length} bytes`);
    t.ok(metadata.row_groups.length >= 7, `${metadata.row_groups.length} row groups`);
    t.equal(parquetPoolsOpen(), 1, 'the thread started with the first Parquet pull');
    t.equal(threads.length, 1, 'one thread');
    // the slice's COPY is ~80 MB: a buffer a chunk or a batch would pile up (V8 frees external
    // garbage only after tens of MB of it); reused buffers and the wasm memory stay well under
    t.ok(peak > 0 && peak < EXTERNAL_BOUND_MB * 2 ** 20, `the thread's external memory peaked at ${(peak / 2 ** 20).toFixed(1)} MB`);
  });

  await t.test('two pulls at once share the thread, each file whole', async (t) => {
    const other = new ColdtrackClient({ baseUrl: world.baseUrl, token: (await world.issue()).token });
    // five days each (259,200 records): both stream while the other does
    const part = { ...query, end_date: '2024-06-05' } as const;
    const files = await Promise.all(
      [client, other].map(async (each) => Buffer.from(await new Response((await each.sensorDataBulk(part)).body).arrayBuffer())),
    );
    const rows = files.map((file) =>
      Number(parquetMetadata(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer).num_rows),
    );
    t.same(rows, [259_200, 259_200], 'each file holds its five days');
    t.ok(files[0]!.equals(files[1]!), 'the same slice, the same bytes');
    t.equal(threads.length, 1, 'no second thread');
  });

  await t.test('dropped by the client after its first bytes', async (t) => {
    const controller = new AbortController();
    const slice = await client.sensorDataBulk(query, { signal: controller.signal });
    const reader = slice.body.getReader();
    const first = await reader.read();
    t.ok(first.value && first.value.length > 0, 'bytes arrive');
    t.equal(await copies(), 1, 'its COPY is still running (held back by the client)');
    controller.abort();
    await reader.cancel().catch(() => {});
    const left = await settled();
    t.equal(left.connections, 0, 'its connection is back (closed or idle)');
    t.equal(left.copies, 0, 'no COPY left on the server');
    t.equal(left.tasks, 0, 'its thread task ended');
  });

  await t.test("its database connection killed mid-stream: the response is cut, never a file's end", async (t) => {
    const slice = await client.sensorDataBulk(query);
    const reader = slice.body.getReader();
    t.ok((await reader.read()).value, 'bytes arrive');
    const { rows } = await world.db.pool.query<{ killed: boolean }>(
      "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'COPY%' AND pid <> pg_backend_pid()",
    );
    t.same(rows, [{ killed: true }], 'the COPY backend terminated');
    const { ending, bytes } = readToTheEnd(reader);
    await t.rejects(ending, 'the body errors: cut, not ended');
    t.pass(`${bytes()} more bytes came before the cut`);
    const left = await settled();
    t.equal(left.connections, 0, 'no connection held');
    t.equal(left.tasks, 0, 'its thread task ended');
  });

  await t.test('its thread ended mid-stream: the response is cut, the next pulls get a new thread, no slot is kept', async (t) => {
    const slice = await client.sensorDataBulk(query);
    const reader = slice.body.getReader();
    t.ok((await reader.read()).value, 'bytes arrive');
    const live = threads.filter((thread) => thread.threadId !== -1);
    t.equal(live.length, 1, 'one thread encodes it');
    // what a crash of the thread (its heap limit, a wasm trap that kills the isolate) looks like to the worker
    const threadsBefore = threads.length;
    await live[0]!.terminate();
    const { ending, bytes } = readToTheEnd(reader);
    await t.rejects(ending, 'the body errors: cut, never a file that ends');
    t.pass(`${bytes()} more bytes came before the cut`);
    const left = await settled();
    t.equal(left.tasks, 0, 'its task ended');
    t.equal(left.connections, 0, 'no connection held');
    t.equal(left.copies, 0, 'no COPY left on the server');
    // the token's slot and the server's two: the same token, and two pulls at once, are served whole
    const part = { ...query, end_date: '2024-06-02' } as const;
    const other = new ColdtrackClient({ baseUrl: world.baseUrl, token: (await world.issue()).token });
    const files = await Promise.all(
      [client, other].map(async (each) => Buffer.from(await new Response((await each.sensorDataBulk(part)).body).arrayBuffer())),
    );
    const rows = files.map((file) =>
      Number(parquetMetadata(file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer).num_rows),
    );
    t.same(rows, [103_680, 103_680], 'the same token and another each get their two days whole, on a new thread');
    t.equal(threads.length, threadsBefore + 1, 'one new thread started');
  });

  await t.test('the thread ends with the app', async (t) => {
    const second = await createTestApp(t, {}, { database: world.db });
    const response = await second.app.inject({
      method: 'GET',
      url: '/api/v1/sensor-data/bulk?start_date=2025-03-01&end_date=2025-03-02&format=parquet',
      headers: { authorization: `Bearer ${world.token}` },
    });
    t.equal(response.statusCode, 200);
    t.equal(parquetPoolsOpen(), 2, "this app's threads and the world's");
    await second.app.close();
    t.equal(parquetPoolsOpen(), 1, "this app's closed with it");
  });
});
