// Conflicts PostgreSQL resolves by aborting one transaction: a deadlock (40P01) or a
// serialization failure (40001). The aborted transaction changed nothing, so the work is safe to
// run again from its start, and another try usually passes (the other side has finished).
// Where they come from here: two ingest batches loading at once; a migration meeting one of
// TimescaleDB's background jobs (a refresh or compression policy that started the moment an
// earlier migration committed it) on the same aggregate or job.
import { setTimeout as sleep } from 'node:timers/promises';

const TRANSIENT_CONFLICTS = new Set(['40P01', '40001']);

export function isTransientConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_CONFLICTS.has(code);
}

export interface RetryOptions {
  /** tries in all, the first included */
  attempts: number;
  /** pause before try n+1 is n times this (default 0: at once) */
  backoffMs?: number;
  onRetry?: (error: Error, attempt: number) => void;
}

/** Runs `work`, again after a transient conflict, up to `attempts` tries in all. */
export async function retryTransient<T>(work: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= options.attempts || !isTransientConflict(error)) throw error;
      options.onRetry?.(error as Error, attempt);
      if (options.backoffMs) await sleep(options.backoffMs * attempt);
    }
  }
}
