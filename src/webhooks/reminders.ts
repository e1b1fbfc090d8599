// Expiry reminders (api_token.expiring 30, 7 and 1 days before a token's expires_at, then
// api_token.expired): every process looks for due ones each minute, and the database's key on
// (token, threshold) makes each written once across processes, instances and restarts.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';

const sql = loadQueries('webhooks', ['writeDueReminders']);

/** Writes the reminders due at `now` as events (each fans out to the endpoints that want it); how many. */
export async function writeDueReminders(pool: Pick<pg.Pool, 'query'>, now: Date): Promise<number> {
  const { rowCount } = await pool.query(sql.writeDueReminders, [now]);
  return rowCount ?? 0;
}
