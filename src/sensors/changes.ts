// Pages of the change feed (GET /api/v1/sensor-data/changes): the spans of history that ingest
// loads added to, in the order they committed, for the units a request may read, each page with
// the cursor to resume from. Only database state: a cursor works on any process or replica, and
// after restarts, until the changes it points after are pruned (then 410 cursor_expired).
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import { ApiError } from '../http/errors.js';
import { cursorPosition, encodeCursor, invalidCursor } from './change-cursor.js';
import type { SpecificationType } from './formats.js';

// unnamed (planned per call): a unit list is often hundreds or thousands of ids, and only a plan
// made for the list at hand hashes it (PostgreSQL builds a hash table for `= ANY(array)` only when
// the array is a constant at planning); the generic plan a named statement settles on searches the
// list linearly for every change it reads, several times the cost of planning
const sql = loadQueries('sensor-changes', ['changesAfter', 'prune', 'cursorKey'], { prepared: false });

/** `since=now`: no changes, only the cursor after every change committed so far. */
export const SINCE_NOW = 'now';

export interface ChangeRecord {
  cooling_unit_id: number;
  specification_type: SpecificationType;
  from: string;
  to: string;
  new_readings: number;
  landed_at: string;
}

export interface ChangesPage {
  changes: ChangeRecord[];
  hasNext: boolean;
  nextCursor: string;
  /** what the page was read at (src/sensors/versions.ts): with the cursor and the units, all it depends on */
  head: bigint;
  prunedThrough: bigint;
}

interface Row {
  pruned_through: string;
  cursor_key: Buffer;
  head: string;
  id: string | null;
  cooling_unit_id: number;
  specification_type: SpecificationType;
  first_at: string;
  last_at: string;
  readings: number;
  landed_at: string;
}

export const cursorExpired = () =>
  new ApiError(
    410,
    'cursor_expired',
    'This cursor is older than the changes the service keeps: export the history again, with a cursor taken before the export began',
  );

export function createChangeFeed(pool: Pick<pg.Pool, 'query'>) {
  // a cursor is opened before the page is read: its position is sealed inside
  const cursorKey = cursorKeyReader(pool);
  return {
    /**
     * The changes of `unitIds` after `since` (omitted: from the oldest change kept; SINCE_NOW:
     * none, only the current cursor). A cursor that is not genuine for this company: 400; one
     * whose changes were pruned: 410.
     */
    async page(companyId: number, unitIds: readonly number[], since: string | undefined, pageSize: number): Promise<ChangesPage> {
      const now = since === SINCE_NOW;
      let position = 0n;
      if (since !== undefined && !now) {
        const decoded = cursorPosition(await cursorKey(), companyId, since);
        if (decoded === null) throw invalidCursor();
        position = decoded;
      }
      // one row more than the page tells whether another page follows
      const limit = now ? 0 : pageSize + 1;
      const { rows } = await pool.query<Row>(sql.changesAfter, [unitIds, String(position), limit]);
      const state = rows[0]!;
      const prunedThrough = BigInt(state.pruned_through);
      // omitted: from the oldest change kept
      if (since === undefined || now) position = now ? BigInt(state.head) : prunedThrough;
      else if (position < prunedThrough) throw cursorExpired();

      const found = rows.filter((row) => row.id !== null);
      const hasNext = found.length > pageSize;
      const changes = found.slice(0, pageSize);
      // a full page resumes after its last change; a last page after every change committed when it
      // was read (head), whichever units those were: ids become visible in id order
      // (013_sensor-changes.sql), so any change committed later has a larger id than head, and a
      // cursor of a token whose units change rarely still moves on and does not expire
      const next = hasNext ? BigInt(changes.at(-1)!.id!) : maxOf(position, BigInt(state.head));
      return {
        changes: changes.map((row) => ({
          cooling_unit_id: row.cooling_unit_id,
          specification_type: row.specification_type,
          from: row.first_at,
          to: row.last_at,
          new_readings: row.readings,
          landed_at: row.landed_at,
        })),
        hasNext,
        nextCursor: encodeCursor(state.cursor_key, companyId, next),
        head: BigInt(state.head),
        prunedThrough,
      };
    },
  };
}

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);

/** Forgets the changes that landed before `before`; returns how many. */
export async function pruneChanges(db: Pick<pg.Pool, 'query'>, before: Date): Promise<number> {
  const { rows } = await db.query<{ removed: number }>(sql.prune, [before.toISOString()]);
  return rows[0]?.removed ?? 0;
}

/** The database's cursor key (sensor_changes_state): read once per process, since it never changes. */
export function cursorKeyReader(db: Pick<pg.Pool, 'query'>): () => Promise<Buffer> {
  let key: Promise<Buffer> | null = null;
  return () => {
    key ??= db.query<{ cursor_key: Buffer }>(sql.cursorKey).then(
      ({ rows }) => rows[0]!.cursor_key,
      (error: unknown) => {
        // not kept: the next request asks again
        key = null;
        throw error;
      },
    );
    return key;
  };
}
