// Row sets as the revenue and impact queries answer them (sql/queries/analytics-*.sql): a JSON
// text per unit, the row's second column. The units come in the order they first appear among
// the rows, which is no order a rollup may rely on.
export function perUnit<Row extends [string, number, ...unknown[]]>(rows: Row[]): string[] {
  const parts = new Map<number, Row[]>();
  for (const row of rows) {
    const part = parts.get(row[1]);
    if (part) part.push(row);
    else parts.set(row[1], [row]);
  }
  return [...parts.values()].map((part) => JSON.stringify(part));
}
