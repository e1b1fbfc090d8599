// libuv's thread pool runs beside the event loop: zlib's streams (a bulk pull's gzip or zstd, a
// large page's compression), fs, dns.lookup and crypto's asynchronous calls. Its threads start
// at the process's own priority, so on a busy machine a bulk pull's compression takes the cores
// at the same weight as the event loops that answer every other request. THREAD_POOL_NICE lowers
// them (what the rollup and Parquet threads do for themselves, workers/rollup-thread.ts): when they
// compete for a core, the event loop wins; on an idle machine they run as fast as before.
import { readdirSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { setPriority } from 'node:os';

/** libuv names its pool's threads so (Linux, /proc/<pid>/task/<tid>/comm). */
const POOL_THREAD_NAME = 'libuv-worker';

/**
 * Sets the nice value of this process's thread-pool threads; resolves to how many it set (0 off
 * Linux, or when `nice` is 0). libuv starts every thread of its pool with the first task, so one
 * small task first makes them all exist.
 */
export async function lowerThreadPoolPriority(nice: number): Promise<number> {
  if (nice === 0 || process.platform !== 'linux') return 0;
  await stat('.');
  let lowered = 0;
  for (const task of readdirSync('/proc/self/task')) {
    try {
      if (readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim() !== POOL_THREAD_NAME) continue;
      setPriority(Number(task), nice);
      lowered++;
    } catch {
      // the thread ended meanwhile, or lowering is not allowed here: it keeps its priority
    }
  }
  return lowered;
}
