// Calendar checks and UTC day arithmetic shared by every date and timestamp parameter: a string
// can match the ISO pattern and still name a day that does not exist (2026-02-30).

/**
 * Milliseconds of 00:00 UTC on a calendar day (month 0-11, overflow rolls over as in Date.UTC).
 * Date.UTC maps years 0-99 to 1900-1999; a partner asking for 0050-01-01 means the year 50.
 */
export function utcDay(year: number, monthIndex: number, day: number): number {
  const date = new Date(Date.UTC(2000, monthIndex, day));
  date.setUTCFullYear(year + (date.getUTCFullYear() - 2000));
  return date.getTime();
}

/** A day of the years 1-9999 (PostgreSQL has no year 0; ISO dates have four digits). */
export function isRealDate(year: number, month: number, day: number): boolean {
  if (year < 1 || year > 9999) return false;
  const date = new Date(utcDay(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The `YYYY-MM-DD` prefix of an ISO date or timestamp names a real day. */
export function hasRealDatePart(iso: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(iso);
  return match !== null && isRealDate(Number(match[1]), Number(match[2]), Number(match[3]));
}

/**
 * An instant as PostgreSQL timestamptz input. JavaScript writes the years past 9999 with a sign
 * and six digits (+010000-01-01T...), which PostgreSQL refuses; the end of a window ending on
 * 9999-12-31 is such an instant.
 */
export function pgTimestamp(ms: number): string {
  return new Date(ms).toISOString().replace(/^\+0*/, '');
}
