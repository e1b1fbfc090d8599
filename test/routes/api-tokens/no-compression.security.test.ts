// Answers that carry a raw token (create, rotate) are never compressed, whatever Accept-Encoding
// asks: a secret compressed beside text an attacker can influence leaks through the length (BREACH).
// The token here is restricted to 300 units, so its answer is well over the 1 KiB from which the
// service compresses everything else, as the list and retrieve answers of the same token show.
import zlib from 'node:zlib';
import t from 'tap';
import { COMPRESSION_THRESHOLD } from '../../../src/plugins/compression.js';
import { BASE, createWorld, type CreatedToken } from './setup.js';

const world = await createWorld(t);
const { a } = world;
const { rows } = await world.db.pool.query<{ id: number }>(
  `INSERT INTO cooling_units (location_id, company_id, name, capacity_crates, capacity_kg)
   SELECT $1, $2, 'bulk unit ' || n, 100, 2500 FROM generate_series(1, 300) n RETURNING id`,
  [a.locationId, a.companyId],
);
const unitIds = rows.map((row) => row.id);
const ASKS = ['gzip, br', 'br', 'gzip', 'br;q=1, gzip;q=0.5, identity;q=0', '*'];

t.test('create and rotate: 201 with a plain JSON body and no Content-Encoding, whatever is asked', async (t) => {
  for (const accept of ASKS) {
    const created = await world.post(
      a.jwt,
      BASE,
      { name: `big ${accept}`, scopes: ['users'], cooling_unit_ids: unitIds },
      { 'accept-encoding': accept },
    );
    t.equal(created.statusCode, 201, `create, ${accept}`);
    t.equal(created.headers['content-encoding'], undefined, `create, ${accept}: not compressed`);
    t.ok(created.rawPayload.length > COMPRESSION_THRESHOLD, `create: ${created.rawPayload.length} bytes, past the threshold`);
    const token = JSON.parse(created.rawPayload.toString('utf8')) as CreatedToken;
    t.match(token.token, /^ctk_/, 'the bytes are the JSON itself, secret included');

    const rotated = await world.post(a.jwt, `${BASE}/${token.id}/rotate`, { grace_period_seconds: 0 }, { 'accept-encoding': accept });
    t.equal(rotated.statusCode, 201, `rotate, ${accept}`);
    t.equal(rotated.headers['content-encoding'], undefined, `rotate, ${accept}: not compressed`);
    t.ok(rotated.rawPayload.length > COMPRESSION_THRESHOLD, `rotate: ${rotated.rawPayload.length} bytes`);
    t.match((JSON.parse(rotated.rawPayload.toString('utf8')) as CreatedToken).token, /^ctk_/);
  }
});

t.test('answers without a secret are still compressed: the list page and the token itself', async (t) => {
  const token = await world.createToken(a.jwt, { name: 'big, retrieved', cooling_unit_ids: unitIds });
  const list = await world.get(a.jwt, `${BASE}?page_size=1000`, { 'accept-encoding': 'gzip, br' });
  t.equal(list.statusCode, 200);
  t.equal(list.headers['content-encoding'], 'br', 'the list page (brotli on a tie)');
  const listed = JSON.parse(zlib.brotliDecompressSync(list.rawPayload).toString('utf8')) as { data: CreatedToken[] };
  t.notOk(
    listed.data.some((entry) => 'token' in entry),
    'and carries no secret',
  );
  const retrieved = await world.get(a.jwt, `${BASE}/${token.id}`, { 'accept-encoding': 'gzip' });
  t.equal(retrieved.headers['content-encoding'], 'gzip', 'the same token without its secret');
  t.ok(zlib.gunzipSync(retrieved.rawPayload).length > COMPRESSION_THRESHOLD, 'a body past the threshold, as the create answers were');
});
