// Calendar checks shared by every date and timestamp parameter: a string can match the ISO
// pattern and still name a day that does not exist (2026-02-30).
export function isRealDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The `YYYY-MM-DD` prefix of an ISO date or timestamp names a real day. */
export function hasRealDatePart(iso: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(iso);
  return match !== null && isRealDate(Number(match[1]), Number(match[2]), Number(match[3]));
}
