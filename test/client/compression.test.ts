// Responses are compressed (src/plugins/compression.ts): brotli or gzip as Accept-Encoding asks,
// for bodies of 1 KiB and more, with Vary: Accept-Encoding; a compressed page decodes to exactly
// the bytes of the uncompressed one, for every data endpoint (the sensor-data route's own
// serializer, the revenue/impact pages sent as pre-serialized bytes from a rollup thread or as a
// string inline) and /openapi.json; small bodies (a one-record page, an error) go as they are.
import http from 'node:http';
import zlib from 'node:zlib';
import t from 'tap';
import { createExportWorld, loadYear } from './world.js';

const world = await createExportWorld(t, { readings: false });
const [unit] = world.unitIds as [number];
// a year of check-outs (two currencies, paid and pending, several methods) for revenue and impact
await world.db.pool.query(
  `INSERT INTO check_outs (cooling_unit_id, farmer_id, operator_id, checked_out_at, currency, cooling_fees, discount, paid, payment_method, paid_at)
   SELECT u, $2, $3, timestamptz '2025-01-01 10:00Z' + d * interval '1 day', CASE WHEN d % 5 = 0 THEN 'USD' ELSE 'NGN' END,
          100 + (d * 37 + u) % 900, (d % 3) * 5, d % 4 <> 0, CASE WHEN d % 4 <> 0 THEN (ARRAY['CASH', 'USSD', 'OPAY']::payment_method[])[1 + d % 3] END,
          CASE WHEN d % 4 <> 0 THEN timestamptz '2025-01-01 10:00Z' + d * interval '1 day' END
   FROM unnest($1::int[]) u, generate_series(0, 364) d`,
  [world.unitIds, world.a.farmerIds[0], world.a.operatorId],
);
await loadYear(world.db, world.unitIds);
const sensorPage = `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=2025-01-01&end_date=2025-01-31&aggregation=raw&page_size=1000`;
const token = (await world.issue({ scopes: ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] })).token;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function get(path: string, encoding: string | null, authorized = true): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (encoding !== null) headers['accept-encoding'] = encoding;
  if (authorized) headers.authorization = `Bearer ${token}`;
  return new Promise((resolve, reject) => {
    http
      .get(`${world.baseUrl}${path}`, { headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

const decode = (answer: Answer) =>
  answer.headers['content-encoding'] === 'br'
    ? zlib.brotliDecompressSync(answer.body)
    : answer.headers['content-encoding'] === 'gzip'
      ? zlib.gunzipSync(answer.body)
      : answer.body;

const year = 'start_date=2025-01-01&end_date=2025-12-31';

const pages: Array<[string, string]> = [
  ['sensor-data, 1,000 readings (fast-json-stringify)', sensorPage],
  ['sensor-data, hourly', `/api/v1/sensor-data?cooling_unit_id=${unit}&${year}&aggregation=hourly&page_size=500`],
  ['revenue, 1,000 records (bytes from a rollup thread)', `/api/v1/analytics/revenue?${year}&page_size=1000`],
  ['revenue, 60 records (inline)', `/api/v1/analytics/revenue?${year}&page_size=60`],
  ['impact, 1,000 records (bytes from a rollup thread)', `/api/v1/analytics/impact?${year}&page_size=1000`],
  ['impact, 60 records (inline)', `/api/v1/analytics/impact?${year}&page_size=60&period=week`],
  ['utilization, 1,000 records', `/api/v1/analytics/utilization?${year}&page_size=1000`],
  ['users, 365 records', `/api/v1/analytics/users?${year}&page_size=1000`],
  ['/openapi.json', '/openapi.json'],
];

t.test('every data endpoint and /openapi.json: compressed pages decode to the uncompressed bytes', async (t) => {
  for (const [name, path] of pages) {
    const plain = await get(path, null);
    t.equal(plain.status, 200, `${name}: 200`);
    t.notOk(plain.headers['content-encoding'], `${name}: not compressed without Accept-Encoding`);
    t.match(plain.headers.vary, /accept-encoding/i, `${name}: Vary names Accept-Encoding on the identity answer too`);
    t.ok(plain.body.length > 4096, `${name}: ${plain.body.length} bytes`);
    for (const encoding of ['br', 'gzip']) {
      const packed = await get(path, encoding);
      t.equal(packed.headers['content-encoding'], encoding, `${name}: ${encoding}`);
      t.match(packed.headers.vary, /accept-encoding/i, `${name}: Vary: Accept-Encoding`);
      t.ok(
        decode(packed).equals(plain.body),
        `${name}: ${encoding} decodes to the same ${plain.body.length} bytes (${packed.body.length} on the wire, ${(plain.body.length / packed.body.length).toFixed(1)}x)`,
      );
    }
  }
});

t.test('the 1,000-reading sensor page is at least 5x smaller on the wire', async (t) => {
  const plain = await get(sensorPage, null);
  for (const encoding of ['br', 'gzip']) {
    const packed = await get(sensorPage, encoding);
    t.ok(plain.body.length / packed.body.length >= 5, `${encoding}: ${plain.body.length} -> ${packed.body.length} bytes`);
  }
});

t.test("negotiation: the client's preference, brotli on a tie, identity when nothing offered fits", async (t) => {
  t.equal((await get(sensorPage, 'gzip, br')).headers['content-encoding'], 'br', 'both offered: brotli');
  t.equal((await get(sensorPage, 'br;q=0.5, gzip')).headers['content-encoding'], 'gzip', 'gzip preferred by q');
  t.equal((await get(sensorPage, 'gzip;q=0, br')).headers['content-encoding'], 'br', 'gzip refused');
  t.equal((await get(sensorPage, 'deflate')).headers['content-encoding'], undefined, 'only deflate: identity');
  t.equal((await get(sensorPage, 'identity')).headers['content-encoding'], undefined);
});

t.test('small bodies are never compressed', async (t) => {
  const small: Array<[string, string, boolean]> = [
    ['a one-record page', `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=2025-01-01&end_date=2025-01-01&page_size=1`, true],
    ['an error (400)', '/api/v1/sensor-data?aggregation=weekly', true],
    ['an error (401)', '/api/v1/sensor-data', false],
    ['an unknown route (404)', '/nope', false],
    ['/healthz', '/healthz', false],
  ];
  for (const [name, path, authorized] of small) {
    const answer = await get(path, 'br, gzip', authorized);
    t.ok(answer.body.length < 1024, `${name}: ${answer.body.length} bytes (status ${answer.status})`);
    t.notOk(answer.headers['content-encoding'], `${name}: not compressed`);
    t.notMatch(String(answer.headers.vary ?? ''), /accept-encoding/i, `${name}: no Vary: Accept-Encoding`);
    t.doesNotThrow(() => JSON.parse(answer.body.toString()), `${name}: plain JSON`);
  }
});
