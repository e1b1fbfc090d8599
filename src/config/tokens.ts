// API tokens' bookkeeping and leak reports: how often last_used_at (and usage per token) is
// written, whether usage is counted at all (the bench turns it off to measure it), and the keys
// GitHub signs leak reports with.
import { z } from 'zod';
import { type LeakReportKey, leakReportKeys } from '../tokens/leak-report-keys.js';
import { integerText, optionalText } from './env.js';

export const tokenVariables = {
  LAST_USED_FLUSH_SECONDS: optionalText.pipe(integerText(1, 3600).optional()),
  // checked further by leakReportKeys() below: JSON with PEM keys in it
  LEAK_REPORT_PUBLIC_KEYS: optionalText,
  // set by bench/kit/variants.ts (the usage case) for the cluster it compares P1 against
  COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE: optionalText.pipe(
    z.enum(['0', '1'], { error: 'must be 1 (usage per token not counted) or 0' }).optional(),
  ),
};

export interface TokenConfig {
  /** how often a worker writes the last_used_at of the tokens it served (src/tokens/last-used.ts) */
  lastUsedFlushMs: number;
  /** the keys a leak report (POST /api/v1/token-leaks) must be signed with; null: the endpoint is off (404) */
  leakReportKeys: LeakReportKey[] | null;
  /** usage per token counted (src/tokens/usage.ts); false only where the bench measures what counting costs (P1) */
  countTokenUsage: boolean;
}

export const tokenConfigOf = (e: z.infer<z.ZodObject<typeof tokenVariables>>): TokenConfig => ({
  lastUsedFlushMs: (e.LAST_USED_FLUSH_SECONDS ?? 30) * 1000,
  leakReportKeys: e.LEAK_REPORT_PUBLIC_KEYS ? leakReportKeys(e.LEAK_REPORT_PUBLIC_KEYS) : null,
  countTokenUsage: e.COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE !== '1',
});
