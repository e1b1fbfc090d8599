// The change feed's cursor (src/sensors/change-cursor.ts) is opaque: sealed per company (version 2),
// nothing in it reads as the feed's position, which counts every company's loads; a version 1
// cursor, signed but readable, as partners and coldtrack-export checkpoints hold them from before,
// is still taken (read as before), and every answer gives version 2 again; an edited cursor, or
// another company's of either version, is 400 invalid_cursor. The cursor is the same in both
// storage profiles (it holds only the feed's position): one profile is enough here.
import { createHmac } from 'node:crypto';
import t, { type Test } from 'tap';
import { CSV_HEADER, createSensorWorld } from '../../helpers/sensor-world.js';
import { issueToken } from '../../helpers/tokens.js';

interface ChangesBody {
  data: Array<{ cooling_unit_id: number; from: string }>;
  meta: { pagination: { has_next: boolean; next_cursor: string } };
  error?: { code: string; message: string; details?: { field?: string } };
}

t.test('the change feed cursor (postgres profile)', async (t) => {
  const world = await createSensorWorld(t, 'postgres');
  const { a, b, a1, ctx } = world;
  const theirs = await issueToken(ctx, b.employeeId, { scopes: ['sensor_data'] });

  async function changes(query: string, headers = world.all.headers) {
    const response = await ctx.app.inject({ method: 'GET', url: `/api/v1/sensor-data/changes?${query}`, headers });
    return { status: response.statusCode, type: response.headers['content-type'], body: response.json() as ChangesBody };
  }
  const cursorNow = async (headers = world.all.headers) => (await changes('since=now', headers)).body.meta.pagination.next_cursor;
  const head = async () => BigInt((await world.one<{ head: string }>('SELECT max(id)::text AS head FROM sensor_changes')).head);
  const cursorKey = async () => (await world.one<{ cursor_key: Buffer }>('SELECT cursor_key FROM sensor_changes_state')).cursor_key;

  /** Every 8-byte big-endian number a cursor's bytes hold, at every offset: what a partner could read as a position. */
  function readableNumbers(cursor: string): bigint[] {
    const bytes = Buffer.from(cursor, 'base64url');
    return Array.from({ length: bytes.length - 7 }, (_, at) => bytes.readBigUInt64BE(at));
  }

  /** A version 1 cursor, as the service gave them before: version, position, then an HMAC of both per company. */
  function versionOneCursor(key: Buffer, companyId: number, position: bigint): string {
    const body = Buffer.alloc(9);
    body.writeUInt8(1, 0);
    body.writeBigUInt64BE(position, 1);
    const companyKey = createHmac('sha256', key).update(`sensor-changes-cursor:${companyId}`).digest();
    return Buffer.concat([body, createHmac('sha256', companyKey).update(body).digest().subarray(0, 16)]).toString('base64url');
  }

  let late = 0;
  /** One late reading of A's first unit: one more change in the feed. */
  async function loadLate(t: Test) {
    late++;
    const stats = await world.load(`${CSV_HEADER}\n${a1},TEMPERATURE,2026-03-0${late}T10:0${late}:00Z,4.${late}\n`);
    t.equal(stats.inserted, 1, 'a late reading stored');
  }

  t.test('opaque: no cursor reads as the position, and two companies share no readable counter', async (t) => {
    const before = await head();
    const [mine, other] = [await cursorNow(), await cursorNow(theirs.headers)];
    t.match(mine, /^[A-Za-z0-9_-]{34}$/, 'the documented shape, as before');
    t.not(mine, other, "the same position is another text for another company's token");
    t.notOk(readableNumbers(mine).includes(before), `the feed's position (${before}) is nowhere in A's cursor`);
    t.notOk(readableNumbers(other).includes(before), "nor in B's");

    await loadLate(t);
    await loadLate(t);
    const after = await head();
    t.equal(after - before, 2n, 'two loads later');
    for (const [name, headers, earlier] of [
      ['A', world.all.headers, mine],
      ['B', theirs.headers, other],
    ] as const) {
      const later = await cursorNow(headers);
      const steps = readableNumbers(later).map((value, at) => value - readableNumbers(earlier)[at]!);
      t.notOk(steps.includes(2n), `${name}'s consecutive cursors hold no counter that moved by the two loads`);
      t.notOk(readableNumbers(later).includes(after), `${name}'s cursor does not hold the new position either`);
    }
    // the same position keeps its text: a stored cursor and a fresh one of the same point compare equal
    t.equal(await cursorNow(), await cursorNow(), 'deterministic for one company and position');
  });

  t.test('a version 1 cursor is still accepted, read as before; the answer gives version 2', async (t) => {
    const key = await cursorKey();
    const position = await head();
    const v1 = versionOneCursor(key, a.companyId, position);
    await loadLate(t);
    const fromV1 = await changes(`since=${v1}&page_size=10`);
    t.equal(fromV1.status, 200, JSON.stringify(fromV1.body.error));
    t.same(
      fromV1.body.data.map((change) => [change.cooling_unit_id, change.from]),
      [[a1, `2026-03-0${late}T10:0${late}:00Z`]],
      'the change after its position, exactly',
    );
    const next = fromV1.body.meta.pagination.next_cursor;
    t.not(next, versionOneCursor(key, a.companyId, await head()), 'next_cursor is not version 1');
    t.notOk(readableNumbers(next).includes(await head()), 'it is sealed');
    t.same((await changes(`since=${next}`)).body.data, [], 'and continues the feed: nothing after it');

    const bOfV1 = await changes(`since=${versionOneCursor(key, b.companyId, position)}`);
    t.same([bOfV1.status, bOfV1.body.error?.code], [400, 'invalid_cursor'], "B's version 1 cursor is not A's");
    const moved = versionOneCursor(key, a.companyId, position - 1n);
    const forged = `${moved.slice(0, 12)}${v1.slice(12)}`; // another position, the signature of the first
    t.same((await changes(`since=${forged}`)).status, 400, 'a version 1 cursor with its position edited: 400');
  });

  t.test('an edited cursor or another company is refused with 400 invalid_cursor and a clear JSON error', async (t) => {
    const mine = await cursorNow();
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    for (const since of [flip(mine, 0), flip(mine, 3), flip(mine, 12), flip(mine, 20), flip(mine, 32)]) {
      const answer = await changes(`since=${since}`);
      t.equal(answer.status, 400, `${since}: 400`);
      t.match(answer.type, /^application\/json/);
      t.same([answer.body.error?.code, answer.body.error?.details], ['invalid_cursor', { field: 'since' }]);
      t.match(answer.body.error?.message, /pass next_cursor exactly as received/);
    }
    const stolen = await changes(`since=${mine}`, theirs.headers);
    t.same(
      [stolen.status, stolen.body.error?.code, stolen.body.error?.details],
      [400, 'invalid_cursor', { field: 'since' }],
      "A's cursor is not B's",
    );
    t.equal((await changes(`since=${await cursorNow(theirs.headers)}`, theirs.headers)).status, 200, "B's own works");
  });
});
