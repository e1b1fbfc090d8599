// The processes of one instance: how many cluster workers, how many rollup threads each, the
// V8 and glibc settings a cluster worker starts with, and its thread pool's scheduling priority.
import { availableParallelism } from 'node:os';
import type { z } from 'zod';
import { ConfigError } from './checks.js';
import { integerText, optionalText } from './env.js';

export const processVariables = {
  WORKERS: optionalText.pipe(integerText(1, 64).optional()),
  ROLLUP_THREADS: optionalText.pipe(integerText(1, 64).optional()),
  HEAP_LIMIT_MB: optionalText.pipe(integerText(128, 65_536).optional()),
  THREAD_POOL_NICE: optionalText.pipe(integerText(0, 19).optional()),
};

export interface ProcessConfig {
  workers: number;
  rollupThreads: number;
  /** V8 old-space limit of each cluster worker and rollup thread, in MB (see heapFlags) */
  heapLimitMb: number;
  /** nice value of each serving process's libuv thread pool (src/thread-pool-priority.ts); 0 leaves it alone */
  threadPoolNice: number;
}

/** `sharedState`: REDIS_URL or REDIS_CLUSTER_NODES is set, which more than one worker needs. */
export function processConfigOf(e: z.infer<z.ZodObject<typeof processVariables>>, sharedState: boolean): ProcessConfig {
  const workers = e.WORKERS ?? (sharedState ? availableParallelism() : 1);
  if (workers > 1 && !sharedState) {
    throw new ConfigError(
      'WORKERS',
      `is ${workers} but REDIS_URL is not set (nor REDIS_CLUSTER_NODES): rate limits can only be shared across workers through Redis`,
    );
  }
  return {
    workers,
    // every worker has its own pool: share the spare cores among them instead of oversubscribing
    rollupThreads: e.ROLLUP_THREADS ?? Math.max(1, Math.floor((availableParallelism() - 1) / workers)),
    heapLimitMb: e.HEAP_LIMIT_MB ?? 512,
    threadPoolNice: e.THREAD_POOL_NICE ?? 0,
  };
}

/**
 * V8 flags for a cluster worker. Why: V8 sizes the next collection from the heap limit, letting
 * the heap grow to several times the live data under the default multi-GB limit; heavy pages make
 * megabytes of short-lived strings, so a worker's RSS grew far past what it held live. A 512 MB
 * limit makes V8 collect much closer to the live data, and 8 MB semi-spaces (default 16) halve the
 * young generation, at the same throughput (docs/benchmarks.md, "HEAP_LIMIT_MB (512) and 8 MB
 * semi-spaces", names the run that compares them).
 * No allocation-site pretenuring: V8 starts allocating a site's objects directly in the old
 * generation once enough of them survive a scavenge, and a request's objects do survive one
 * while it waits on Redis and PostgreSQL, then die right after; pretenured they became old-space
 * garbage, and the mark-compactor ran often on every worker under the warm-token load. Without it
 * fewer mark-compacts ran and P1's p99 came down (docs/benchmarks.md, "No allocation-site
 * pretenuring").
 * A flag the operator already set (NODE_OPTIONS or the node command line) is left alone.
 */
export function heapFlags(heapLimitMb: number, alreadySet: string): string[] {
  const flags: string[] = [];
  if (!/--max-old-space-size\b/.test(alreadySet)) flags.push(`--max-old-space-size=${heapLimitMb}`);
  if (!/--max-semi-space-size\b/.test(alreadySet)) flags.push('--max-semi-space-size=8');
  if (!/--(no-)?allocation-site-pretenuring\b/.test(alreadySet)) flags.push('--no-allocation-site-pretenuring');
  return flags;
}

/**
 * glibc settings for a cluster worker's environment (glibc reads them when the process starts).
 * Why: a large page's buffers (hundreds of KB to MBs) are mmapped and given back to the system
 * when freed, but glibc then raises its mmap threshold to the size just freed, so the next ones
 * come from the heap and stay in the worker's RSS after they are freed. A fixed 128 KB threshold
 * keeps giving them back, which lowers each worker's peak RSS at the same pages per second
 * (`npm run bench -- --only large-pages` measures it: P8). A value the operator already set is
 * left alone.
 */
export function mallocEnv(alreadySet: NodeJS.ProcessEnv): Record<string, string> {
  return alreadySet.MALLOC_MMAP_THRESHOLD_ === undefined ? { MALLOC_MMAP_THRESHOLD_: '131072' } : {};
}
