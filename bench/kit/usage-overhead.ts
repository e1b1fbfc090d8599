// `npm run bench -- --usage-overhead`: P1 (the warm-token page) with and without usage counting in
// one run. Issue 27 allows usage counting (and the allow-lists) to cost P1 at most 3 %. A second
// project cluster is started from the same build with usage counting off (an undocumented
// variable read only for this, src/http-server.ts), and P1's scenario runs against both
// clusters through the same machinery as project/reference (pilot, alternating order, retries):
// the "project" slot is the cluster as shipped, the "reference" slot the one without counting.
import type { Dataset } from './dataset.js';
import { summarize } from './results.js';
import { runBothServers, type ScenarioSetting } from './scenario-runs.js';
import { scenarios } from './scenarios.js';
import { type Service, startProjectVariant } from './services.js';

/** The most P1 may drop with usage counting in the path (issue 27). */
export const USAGE_OVERHEAD_LIMIT = 0.03;

export interface UsageOverhead {
  withUsage: { okPerS: number; p99Ms: number };
  withoutUsage: { okPerS: number; p99Ms: number };
  /** with / without, in 2xx per second: 1 is no cost */
  ratio: number;
  withinLimit: boolean;
}

export async function measureUsageOverhead(options: {
  dataset: Dataset;
  redisUrl: string;
  project: Service;
  setting: Omit<ScenarioSetting, 'clusters'>;
  log: (line: string) => void;
}): Promise<UsageOverhead | { error: string }> {
  const p1 = scenarios.find((scenario) => scenario.target === 'P1')!;
  let without: Service | null = null;
  try {
    without = await startProjectVariant(
      {
        name: 'project without usage counting',
        databaseUrl: options.dataset.url,
        redisUrl: options.redisUrl,
        env: { COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE: '1' },
      },
      options.log,
    );
    options.log(`usage overhead: ${p1.id} with usage counting ("project") and without ("reference")`);
    const runs = await runBothServers(p1, 0, { ...options.setting, clusters: { project: options.project, reference: without } });
    const [counted, uncounted] = [summarize(runs, 'project'), summarize(runs, 'reference')];
    const label = Object.keys(counted?.loads ?? {})[0];
    const a = label ? counted?.loads[label] : undefined;
    const b = label ? uncounted?.loads[label] : undefined;
    if (!a || !b) return { error: 'usage overhead: no figures' };
    const ratio = a.okPerS / b.okPerS;
    return {
      withUsage: { okPerS: a.okPerS, p99Ms: a.latencyMs.p99 },
      withoutUsage: { okPerS: b.okPerS, p99Ms: b.latencyMs.p99 },
      ratio,
      withinLimit: ratio >= 1 - USAGE_OVERHEAD_LIMIT,
    };
  } catch (error) {
    return { error: `usage overhead failed: ${(error as Error).message}` };
  } finally {
    await without?.stop();
  }
}

/** One line for the run's output. */
export function usageOverheadLine(result: UsageOverhead | { error: string }): string {
  if ('error' in result) return result.error;
  const { withUsage: a, withoutUsage: b } = result;
  return (
    `P1 usage counting: with ${a.okPerS.toFixed(1)} 2xx/s (p99 ${a.p99Ms} ms), without ${b.okPerS.toFixed(1)} 2xx/s (p99 ${b.p99Ms} ms): ` +
    `ratio ${result.ratio.toFixed(3)} (limit >= ${(1 - USAGE_OVERHEAD_LIMIT).toFixed(2)}: ${result.withinLimit ? 'met' : 'MISSED'})`
  );
}
