// The change feed's recording (src/sensors/change-spans.ts, sql/migrations/013_sensor-changes.sql):
// a load's readings become spans per unit and specification type, split where readings are more
// than an hour apart and bounded per series; and ids become visible in id order, so a reader that
// resumes after the last id it saw never passes a change that commits later.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { changeSpans, instantText, MAX_SPANS_PER_SERIES } from '../../src/sensors/change-spans.js';
import { createTestDatabase } from '../helpers/db.js';

const Y2000_MS = Date.UTC(2000, 0, 1);
const us = (iso: string) => (Date.parse(iso) - Y2000_MS) * 1000;
const reading = (unitId: number, type: 'TEMPERATURE' | 'HUMIDITY', iso: string) => ({ unitId, type, recordedAtUs: us(iso) });

t.test('instants keep their microseconds', async (t) => {
  t.equal(instantText(us('2026-03-06T10:07:00Z')), '2026-03-06T10:07:00.000000Z');
  t.equal(instantText(us('2026-03-06T10:07:00.25Z') + 7), '2026-03-06T10:07:00.250007Z');
});

t.test('one span per series while readings are at most an hour apart; split at wider gaps', async (t) => {
  const spans = changeSpans([
    reading(1, 'TEMPERATURE', '2026-03-06T11:00:00Z'),
    reading(1, 'TEMPERATURE', '2026-03-06T10:00:00Z'), // out of order: sorted first
    reading(1, 'TEMPERATURE', '2026-03-06T12:00:00Z'),
    { ...reading(1, 'TEMPERATURE', '2026-03-06T13:00:00Z'), recordedAtUs: us('2026-03-06T13:00:00Z') + 1 }, // just over an hour after 12:00
    reading(1, 'HUMIDITY', '2026-03-06T10:30:00Z'),
    reading(2, 'TEMPERATURE', '2026-03-01T00:00:00Z'),
  ]);
  const rows = spans.units.map((unit, i) => [unit, spans.types[i], spans.firsts[i], spans.lasts[i], spans.counts[i]]);
  t.same(rows, [
    [1, 'TEMPERATURE', '2026-03-06T10:00:00.000000Z', '2026-03-06T12:00:00.000000Z', 3],
    [1, 'TEMPERATURE', '2026-03-06T13:00:00.000001Z', '2026-03-06T13:00:00.000001Z', 1],
    [1, 'HUMIDITY', '2026-03-06T10:30:00.000000Z', '2026-03-06T10:30:00.000000Z', 1],
    [2, 'TEMPERATURE', '2026-03-01T00:00:00.000000Z', '2026-03-01T00:00:00.000000Z', 1],
  ]);
});

t.test('a scattered load records at most MAX_SPANS_PER_SERIES spans per series, split at its widest gaps', async (t) => {
  // a reading every two hours for 100 hours, and one a week later: the week is among the widest gaps
  const readings = Array.from({ length: 50 }, (_, i) => reading(1, 'TEMPERATURE', new Date(Date.UTC(2026, 0, 1, 2 * i)).toISOString()));
  readings.push(reading(1, 'TEMPERATURE', '2026-01-12T00:00:00Z'));
  const spans = changeSpans(readings);
  t.equal(spans.units.length, MAX_SPANS_PER_SERIES, 'bounded');
  t.equal(
    spans.counts.reduce((a, b) => a + b, 0),
    51,
    'every reading in one span',
  );
  t.equal(spans.firsts.at(-1), '2026-01-12T00:00:00.000000Z', 'the week-long gap is a boundary');
  for (let i = 1; i < spans.units.length; i++) t.ok(spans.firsts[i]! > spans.lasts[i - 1]!, 'spans in order, disjoint');
});

t.test('ids become visible in id order: a recording waits for the one before it to commit', async (t) => {
  const db = await createTestDatabase(t);
  const record = 'SELECT sensor_changes_record($1::int[], $2::specification_type[], $3::timestamptz[], $3::timestamptz[], $4::int[])';
  const first = await db.pool.connect();
  const second = await db.pool.connect();
  t.teardown(() => {
    first.release();
    second.release();
  });
  await first.query('BEGIN');
  await first.query(record, [[1], ['TEMPERATURE'], ['2026-01-01T00:00:00Z'], [1]]);
  await second.query('BEGIN');
  let secondDone = false;
  const secondRecords = second.query(record, [[2], ['TEMPERATURE'], ['2026-01-01T00:00:00Z'], [1]]).then(() => (secondDone = true));
  await sleep(300);
  t.notOk(secondDone, 'the second load waits while the first has not committed');
  const { rows: none } = await db.pool.query('SELECT id FROM sensor_changes');
  t.same(none, [], 'a reader sees neither yet');
  await first.query('COMMIT');
  await secondRecords;
  const { rows: one } = await db.pool.query<{ cooling_unit_id: number }>('SELECT cooling_unit_id FROM sensor_changes ORDER BY id');
  t.same(
    one.map((row) => row.cooling_unit_id),
    [1],
    'the first is visible, the second (a larger id) not yet',
  );
  await second.query('COMMIT');
  const { rows: both } = await db.pool.query<{ cooling_unit_id: number }>('SELECT cooling_unit_id FROM sensor_changes ORDER BY id');
  t.same(
    both.map((row) => row.cooling_unit_id),
    [1, 2],
    'in the order they committed',
  );
});
