// Checks a company's audit chain (`npm run audit:verify`): walks its events in sequence order and
// stops at the first that does not fit. An event fits when its sequence follows the one before
// (1 for the first), its prev_hash is the stored hash of the one before (none for the first), and
// its stored hash is the one its stored content gives now (token_audit_event_hash, the same
// function that chained it). An event changed by SQL fails the last check; one removed leaves a gap
// before the next; one changed with its hash recomputed breaks the next event's prev_hash.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';

const sql = loadQueries('token-audit', ['chainSegment']);

/** Events read per query: the walk holds one batch in memory, whatever the chain's length. */
const BATCH = 1000;

export type ChainBreak = 'sequence_gap' | 'prev_hash_mismatch' | 'hash_mismatch';

export const BREAK_EXPLANATIONS: Record<ChainBreak, string> = {
  sequence_gap: 'gap in sequence: an event before it is missing',
  prev_hash_mismatch: 'prev-hash mismatch: it does not name the event before it (that one was altered, removed or reordered)',
  hash_mismatch: 'hash mismatch: its content is not what was recorded',
};

export type ChainVerdict =
  | { ok: true; events: number; head: string | null }
  | { ok: false; events: number; event: { id: number; sequence: number }; expectedSequence: number; reason: ChainBreak };

interface SegmentRow {
  id: string;
  sequence: string;
  prev_hash: Buffer | null;
  hash: Buffer;
  recomputed: Buffer;
}

/** events: how many fitted before the first that does not (all of them when ok). */
export async function verifyChain(db: Pick<pg.Pool, 'query'>, companyId: number): Promise<ChainVerdict> {
  let events = 0;
  // the last event that fitted: sequence 0 and no hash before the first
  let lastSequence = 0;
  let lastHash: Buffer | null = null;
  for (;;) {
    const { rows } = await db.query<SegmentRow>(sql.chainSegment, [companyId, lastSequence, BATCH]);
    for (const row of rows) {
      const event = { id: Number(row.id), sequence: Number(row.sequence) };
      const expectedSequence = lastSequence + 1;
      const reason: ChainBreak | null =
        event.sequence !== expectedSequence
          ? 'sequence_gap'
          : !sameBytes(row.prev_hash, lastHash)
            ? 'prev_hash_mismatch'
            : !row.hash.equals(row.recomputed)
              ? 'hash_mismatch'
              : null;
      if (reason) return { ok: false, events, event, expectedSequence, reason };
      events += 1;
      lastSequence = event.sequence;
      lastHash = row.hash;
    }
    if (rows.length < BATCH) return { ok: true, events, head: lastHash?.toString('hex') ?? null };
  }
}

const sameBytes = (a: Buffer | null, b: Buffer | null) => (a === null || b === null ? a === b : a.equals(b));
