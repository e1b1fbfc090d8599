// last_used_at, written behind: requests only note the time in memory; one UPDATE per flush
// (every LAST_USED_FLUSH_SECONDS, 30 by default, and on shutdown) writes every token used since. Never one write per request, and a
// failed flush keeps its entries for the next one. The same flush writes the usage counts
// (src/tokens/usage.ts), when they are counted.
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import type { TokenUsage } from './usage.js';

const sql = loadQueries('api-tokens', ['recordLastUsed']);

export function createLastUsedRecorder(
  pool: pg.Pool,
  flushEveryMs: number,
  onError: (error: unknown, what: 'last_used' | 'usage') => void,
  usage: TokenUsage | null = null,
) {
  let pending = new Map<string, number>();
  let flushing: Promise<void> | null = null;

  // the two writes are independent: one failing keeps only its own entries for the next flush
  async function writePending() {
    await Promise.all([writeLastUsed(), usage?.flush().catch((error: unknown) => onError(error, 'usage'))]);
  }

  async function writeLastUsed() {
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    try {
      await pool.query(sql.recordLastUsed, [[...batch.keys()], [...batch.values()].map((ms) => new Date(ms))]);
    } catch (error) {
      for (const [id, at] of batch) pending.set(id, Math.max(at, pending.get(id) ?? 0));
      onError(error, 'last_used');
    }
  }

  function flush(): Promise<void> {
    flushing ??= writePending().finally(() => {
      flushing = null;
    });
    return flushing;
  }

  const timer = setInterval(() => void flush(), flushEveryMs);
  timer.unref();

  return {
    touch(tokenId: string, at: Date) {
      const ms = at.getTime();
      if ((pending.get(tokenId) ?? 0) < ms) pending.set(tokenId, ms);
    },
    flush,
    pendingCount: () => pending.size,
    async close() {
      clearInterval(timer);
      await flushing;
      await flush();
    },
  };
}

export type LastUsedRecorder = ReturnType<typeof createLastUsedRecorder>;
