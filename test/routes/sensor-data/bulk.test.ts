// GET /api/v1/sensor-data/bulk in both storage profiles (test/helpers/sensor-world.ts): the same
// records, order and values as the pages of GET /api/v1/sensor-data, as CSV or NDJSON, plain or
// zstd/gzip-encoded; sliced into whole days by max_records, each slice naming the next in its
// Link header; one request of the token's budget each; refused input is 400 naming the parameter,
// a unit the token may not read 404, and a restricted token gets only its units.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createSensorWorld, eachProfile, type SensorWorld } from '../../helpers/sensor-world.js';
import { issueToken } from '../../helpers/tokens.js';

const zstdDecompress = promisify(zlib.zstdDecompress);
const gunzip = promisify(zlib.gunzip);

async function bulk(world: SensorWorld, query: string, headers: Record<string, string> = world.all.headers) {
  const response = await world.ctx.app.inject({ method: 'GET', url: `/api/v1/sensor-data/bulk?${query}`, headers });
  const encoding = response.headers['content-encoding'];
  const raw = response.rawPayload;
  const text = (encoding === 'zstd' ? await zstdDecompress(raw) : encoding === 'gzip' ? await gunzip(raw) : raw).toString('utf8');
  return { response, text };
}

/** Every record of a query through the pages of GET /api/v1/sensor-data, walked by cursor. */
async function paged(world: SensorWorld, query: string) {
  const records: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  for (;;) {
    const { body } = await world.get(`${query}&page_size=1000${cursor ? `&cursor=${cursor}` : ''}`);
    records.push(...body.data);
    cursor = body.meta.pagination.next_cursor as string | null;
    if (!cursor) return records;
  }
}

const csvRecords = (text: string) => {
  const [header, ...lines] = text.trimEnd().split('\n');
  const names = header!.split(',');
  return lines.map((line) => {
    const cells = line.split(',');
    const record: Record<string, unknown> = {};
    names.forEach((name, i) => {
      const cell = cells[i]!;
      if (cell === '') return;
      record[name] = name === 'timestamp' || name === 'specification_type' ? cell : Number(cell);
    });
    return record;
  });
};

eachProfile(t, async (t, profile) => {
  const world = await createSensorWorld(t, profile);
  const { a1, a2 } = world;
  const window = 'start_date=2026-03-01&end_date=2026-03-15';

  await t.test('the records of the pages, as CSV and NDJSON, in every aggregation', async (t) => {
    for (const aggregation of ['raw', 'hourly', 'daily']) {
      const expected = await paged(world, `${window}&aggregation=${aggregation}`);
      t.ok(expected.length > 0, `${aggregation}: ${expected.length} records`);
      const csv = await bulk(world, `${window}&aggregation=${aggregation}&format=csv`);
      t.equal(csv.response.statusCode, 200);
      t.match(csv.response.headers['content-type'], /^text\/csv/);
      t.equal(csv.text.split('\n')[0], 'timestamp,cooling_unit_id,specification_type,value,sample_count,min,max', 'CSV: the header first');
      t.same(csvRecords(csv.text), expected, `${aggregation} CSV: the same records, values and order`);
      const ndjson = await bulk(world, `${window}&aggregation=${aggregation}&format=ndjson`);
      t.equal(ndjson.response.headers['content-type'], 'application/x-ndjson');
      const lines = ndjson.text.trimEnd().split('\n');
      t.same(
        lines.map((line) => JSON.parse(line) as unknown),
        expected,
        `${aggregation} NDJSON: each line a record, as the pages write it`,
      );
      t.equal(lines[0], JSON.stringify(expected[0]), `${aggregation} NDJSON: byte for byte the pages' JSON`);
      t.equal(csv.response.headers.link, undefined, 'one slice holds the window: no next');
    }
  });

  await t.test('zstd or gzip as accepted, the same bytes underneath', async (t) => {
    const plain = await bulk(world, `${window}&format=ndjson`);
    for (const [accept, encoding] of [
      ['zstd, gzip', 'zstd'],
      ['gzip;q=1, zstd;q=0', 'gzip'],
      ['br', undefined],
    ] as const) {
      const encoded = await bulk(world, `${window}&format=ndjson`, { ...world.all.headers, 'accept-encoding': accept });
      t.equal(encoded.response.headers['content-encoding'], encoding, `${accept}: ${encoding ?? 'identity'}`);
      t.equal(encoded.text, plain.text, `${accept}: the same records`);
      if (encoding) t.ok(encoded.response.rawPayload.length * 4 < plain.response.rawPayload.length, `${encoding}: at least 4x smaller`);
    }
  });

  await t.test('slices of whole days, each naming the next, together the window', async (t) => {
    const expected = await paged(world, `${window}&aggregation=hourly`);
    const slices: string[] = [];
    const records: Record<string, unknown>[] = [];
    let url: string | undefined = `${window}&aggregation=hourly&max_records=500&format=csv`;
    const before = Number((await world.get(`${window}&page_size=1`)).body.meta.pagination.page);
    t.equal(before, 1);
    while (url) {
      const { response, text } = await bulk(world, url);
      t.equal(response.statusCode, 200);
      slices.push(`${response.headers['x-slice-start']}..${response.headers['x-slice-end']}`);
      const part = csvRecords(text);
      t.ok(part.length <= 500 || slices.length === 1, `${slices.at(-1)}: ${part.length} records, at most 500 past the first day`);
      t.ok(
        part.every(
          (r) =>
            String(r.timestamp).slice(0, 10) >= response.headers['x-slice-start']! &&
            String(r.timestamp).slice(0, 10) <= response.headers['x-slice-end']!,
        ),
        "only the slice's days",
      );
      records.push(...part);
      const link = response.headers.link as string | undefined;
      url = link ? /<\/api\/v1\/sensor-data\/bulk\?([^>]+)>; rel="next"/.exec(link)![1] : undefined;
    }
    t.ok(slices.length >= 3, `${slices.length} slices: ${slices.join(', ')}`);
    t.same(records, expected, 'the slices in turn hold the window, each record once');
  });

  await t.test('one request of the budget each; refused input changes nothing', async (t) => {
    const first = await bulk(world, `${window}&format=csv`);
    const second = await bulk(world, `${window}&format=csv`);
    t.equal(Number(first.response.headers['x-ratelimit-remaining']) - Number(second.response.headers['x-ratelimit-remaining']), 1);
    for (const [query, field] of [
      ['format=xlsx', 'format'],
      ['format=xml', 'format'],
      ['max_records=0', 'max_records'],
      ['max_records=5000001', 'max_records'],
      ['aggregation=weekly', 'aggregation'],
      ['start_date=2025-01-01&end_date=2026-03-15', 'start_date'],
      ['page=2', 'page'],
    ] as const) {
      const { response } = await bulk(world, query);
      t.equal(response.statusCode, 400, query);
      t.equal(response.json<{ error: { details: { field: string } } }>().error.details.field, field, `${query}: names ${field}`);
    }
  });

  await t.test("units: another company's is 404, a restricted token gets only its own", async (t) => {
    const foreign = await bulk(world, `${window}&cooling_unit_id=${world.b.unitIds[0]}`);
    t.equal(foreign.response.statusCode, 404);
    const restricted = await issueToken(world.ctx, world.a.employeeId, { scopes: ['sensor_data'], cooling_unit_ids: [a2] });
    const { text } = await bulk(world, `${window}&format=ndjson`, restricted.headers);
    const units = new Set(
      text
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { cooling_unit_id: number }).cooling_unit_id),
    );
    t.same([...units], [a2], 'only the unit the token lists');
    const none = await issueToken(world.ctx, world.a.employeeId, { scopes: ['utilization'] });
    t.equal((await bulk(world, window, none.headers)).response.statusCode, 403, 'without sensor_data: 403');
    t.ok(a1 !== a2);
  });

  await t.test('every connection a pull took is back in the pool', async (t) => {
    const pool = world.ctx.app.db;
    for (let waited = 0; pool.totalCount !== pool.idleCount && waited < 2000; waited += 50) await sleep(50);
    t.equal(pool.totalCount - pool.idleCount, 0, `${pool.totalCount} connections, ${pool.idleCount} idle`);
  });
});
