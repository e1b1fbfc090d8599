// The users rollup (workers/rollups/users.ts) against the figures' definitions (docs/figures.md,
// "users") counted the slow way, one movement and one farmer at a time, on generated pages as the
// users queries print them: buckets of any length, live units and deleted ones reporting on the
// first buckets only, movements (also of a unit off the page and days off the page), join days.
import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import t from 'tap';
import {
  type JoinedRow,
  type MovementColumns,
  rollupUsers,
  runRollup,
  type UsersBucket,
  type UsersInput,
} from '../../workers/rollups/index.js';
import { check } from './property.js';

const decoder = new TextDecoder();
const rollupText = (input: UsersInput) => decoder.decode(rollupUsers(input));

const UNITS = [3, 7, 11, 40];
const OFF_PAGE_UNIT = 99;
const FARMERS = [1, 2, 5, 8, 2_147_483_647];

const page = fc
  .record({
    // the page's buckets as their lengths in days, one to eight of them
    lengths: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
    begun: fc.integer({ min: 0, max: 8 }),
    // how many of the page's buckets each unit reports on (all: a live unit)
    reach: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: UNITS.length, maxLength: UNITS.length }),
    movements: fc.array(
      fc.tuple(fc.boolean(), fc.integer({ min: -2, max: 75 }), fc.constantFrom(...UNITS, OFF_PAGE_UNIT), fc.constantFrom(...FARMERS)),
      { maxLength: 120 },
    ),
    joined: fc.array(fc.tuple(fc.integer({ min: -1, max: 75 }), fc.integer({ min: 1, max: 5 })), { maxLength: 20 }),
    // how many movements each part of a column set holds (one: a part per movement)
    partSize: fc.integer({ min: 1, max: 130 }),
  })
  .map(({ lengths, begun, reach, movements, joined, partSize }) => {
    let day = 0;
    const buckets: UsersBucket[] = lengths.map((length, index) => {
      const bucket = {
        period_start: `2025-01-${String(index + 1).padStart(2, '0')}`,
        period_end: `2025-02-${String(index + 1).padStart(2, '0')}`,
        firstDay: day,
        lastDay: day + length - 1,
        elapsed: index < begun,
      };
      day += length;
      return bucket;
    });
    return {
      buckets,
      units: UNITS.map((id, index): [number, number] => [id, Math.min(reach[index]!, buckets.length)]),
      movements,
      joined,
      partSize,
      days: day,
    };
  });
type Page = typeof page extends fc.Arbitrary<infer P> ? P : never;

const columns = (rows: Page['movements']): MovementColumns => [rows.map((m) => m[1]), rows.map((m) => m[2]), rows.map((m) => m[3])];
/** movements as the users queries print them: in parts of a few movements each (none for no movement) */
const parts = (rows: Page['movements'], size: number): string[] =>
  Array.from({ length: Math.ceil(rows.length / size) }, (_, k) => JSON.stringify(columns(rows.slice(k * size, (k + 1) * size))));

function inputOf(p: Page): UsersInput {
  return {
    buckets: p.buckets,
    units: p.units,
    joined: JSON.stringify(p.joined satisfies JoinedRow[]),
    checkIns: parts(
      p.movements.filter(([checkIn]) => checkIn),
      p.partSize,
    ),
    checkOuts: parts(
      p.movements.filter(([checkIn]) => !checkIn),
      p.partSize,
    ),
  };
}

/** Every figure from its definition, one bucket at a time. */
function reference(p: Page) {
  return p.buckets.map((bucket, b) => {
    const reporting = p.units.filter(([, reach]) => b < reach).map(([id]) => id);
    const inside = p.movements.filter(([, day, unit]) => day >= bucket.firstDay && day <= bucket.lastDay && reporting.includes(unit));
    const joinedBy = (day: number) => p.joined.filter(([joinedOn]) => joinedOn <= day).reduce((sum, [, n]) => sum + n, 0);
    return {
      period_start: bucket.period_start,
      period_end: bucket.period_end,
      registered_users: bucket.elapsed ? joinedBy(bucket.lastDay) : null,
      active_users: new Set(inside.map(([, , , farmer]) => farmer)).size,
      sign_ups: p.joined.filter(([day]) => day >= bucket.firstDay && day <= bucket.lastDay).reduce((sum, [, n]) => sum + n, 0),
      by_cooling_unit: reporting.map((unit) => {
        const here = inside.filter((m) => m[2] === unit);
        return {
          cooling_unit_id: unit,
          active_users: new Set(here.map(([, , , farmer]) => farmer)).size,
          check_ins: here.filter(([checkIn]) => checkIn).length,
          check_outs: here.filter(([checkIn]) => !checkIn).length,
        };
      }),
    };
  });
}

t.test("users records equal the figures' definitions, as JSON.stringify writes them", async (t) => {
  check(
    t,
    'rollupUsers against the reference',
    fc.property(page, (p) => {
      const expected = reference(p);
      const text = rollupText(inputOf(p));
      assert.deepStrictEqual(JSON.parse(text), expected);
      assert.equal(text, JSON.stringify(expected), 'byte for byte');
      assert.equal(decoder.decode(runRollup({ kind: 'users', input: inputOf(p) }) as Uint8Array), text);
    }),
    500,
  );
});

t.test('an empty page and a page without movements', async (t) => {
  t.equal(rollupText({ buckets: [], units: [[1, 0]], joined: '[]', checkIns: [], checkOuts: [] }), '[]');
  const quiet = JSON.parse(
    rollupText({
      buckets: [{ period_start: '2025-03-01', period_end: '2025-03-07', firstDay: 0, lastDay: 6, elapsed: true }],
      units: [
        [5, 1],
        [6, 0],
      ],
      joined: '[[-1,4],[2,1]]',
      checkIns: ['[[],[],[]]'],
      checkOuts: [],
    }),
  );
  t.strictSame(quiet, [
    {
      period_start: '2025-03-01',
      period_end: '2025-03-07',
      registered_users: 5,
      active_users: 0,
      sign_ups: 1,
      by_cooling_unit: [{ cooling_unit_id: 5, active_users: 0, check_ins: 0, check_outs: 0 }],
    },
  ]);
});
