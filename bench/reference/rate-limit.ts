// The rate limit as the project counts it: one fixed window per key in Redis, counted by the
// project's own script, read from the one file both use (src/rate-limit/fixed-window.lua; in the
// compiled layout dist/src/rate-limit/, copied there by npm run build like dist/sql/).
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { Refusal } from './refusal.js';

const FIXED_WINDOW_SCRIPT = readFileSync(new URL('../../src/rate-limit/fixed-window.lua', import.meta.url), 'utf8');

/** The project's limits a minute: per API token, per employee for reads and for writes. */
export const LIMITS = { token: 100, read: 600, write: 120 } as const;
const WINDOW_MS = 60_000;

export type Limit = (key: string, max: number) => Promise<void>;

/** Counts one request against `key`'s window; over `max`, a 429 refusal. */
export function createLimit(redis: Redis): Limit {
  redis.defineCommand('window', { numberOfKeys: 1, lua: FIXED_WINDOW_SCRIPT });
  const windowed = redis as unknown as { window(key: string, ms: number): Promise<[number, number]> };
  return async (key, max) => {
    const [current] = await windowed.window(`coldtrack-bench-reference:rl:${key}`, WINDOW_MS);
    if (current > max) throw new Refusal(429, 'rate_limited');
  };
}
