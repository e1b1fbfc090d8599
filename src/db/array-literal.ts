// PostgreSQL array literals for the hot paths' parameters, built in one join. Why: pg serializes a
// JavaScript array element by element (prepareValue, escapeElement and quoting of every date),
// and on the warm-token page that was a few percent of the worker's CPU and of what it allocated
// (bench/run.ts --only small-page). The SQL casts the text ($1::int[], $4::date[]) as before.
// Only values these helpers can prove safe are written unquoted; anything else is refused, so no
// element can ever change the literal's shape.

const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

/** '{1,2,3}' for integers (unit ids, counts); throws on anything else. */
export function intArrayLiteral(values: readonly number[]): string {
  for (const value of values) {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer for an int[] parameter: ${value}`);
  }
  return `{${values.join(',')}}`;
}

/** '{2025-06-01,2025-06-02}' for calendar days as YYYY-MM-DD; throws on anything else. */
export function dayArrayLiteral(values: readonly string[]): string {
  for (const value of values) {
    if (!ISO_DAY.test(value)) throw new TypeError(`not a YYYY-MM-DD day for a date[] parameter: ${JSON.stringify(value)}`);
  }
  return `{${values.join(',')}}`;
}
