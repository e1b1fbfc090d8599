// Running the loadtest's scenarios one after another, each load a 1-second warm-up then its measured
// run at its steady rate. The tokens are dealt in one rotation across every load, each run starting
// after the last token the previous one dealt, so no token gets more than its share.
import type { DeploymentScenario, LoadtestContext, LoadtestLoad } from './loadtest-scenarios.js';
import { type LoadFigures, runDealtLoad } from './load.js';
import { ms } from './statistics.js';

export const WARMUP_SECONDS = 1;

export interface LoadtestLoadResult {
  label: string;
  /** requests a second asked */
  rate: number;
  connections: number;
  seconds: number;
  distinctRequests: number;
  figures: LoadFigures;
  /** 429s: the rate was above what the tokens (or the employee) may send */
  rateLimited: number;
  /** every other answer that was not 2xx, by status */
  otherNon2xx: Record<string, number>;
}

export interface LoadtestScenarioResult {
  id: string;
  title: string;
  what: string;
  status: 'measured' | 'not measured';
  reason: string | null;
  loads: LoadtestLoadResult[];
}

export interface RunSetting {
  /** the deployment's origin: the loads' paths carry the base URL's path */
  origin: string;
  /** checked before every load: an interrupted run stops at once */
  interrupted: () => boolean;
  log: (line: string) => void;
}

function resultOf(load: LoadtestLoad, figures: LoadFigures): LoadtestLoadResult {
  const otherNon2xx = Object.fromEntries(Object.entries(figures.statusCodes).filter(([code]) => !code.startsWith('2') && code !== '429'));
  return {
    label: load.label,
    rate: load.rate,
    connections: load.connections,
    seconds: load.seconds,
    distinctRequests: load.requests.length,
    figures,
    rateLimited: figures.statusCodes['429'] ?? 0,
    otherNon2xx,
  };
}

export async function runDeploymentScenarios(
  selected: readonly DeploymentScenario[],
  context: LoadtestContext,
  setting: RunSetting,
): Promise<LoadtestScenarioResult[]> {
  const { origin, interrupted, log } = setting;
  let nextToken = 0;
  const run = async (load: LoadtestLoad, seconds: number) => {
    const rotating = load.credentials === 'tokens';
    const { figures, dealt } = await runDealtLoad({
      url: origin,
      connections: load.connections,
      duration: seconds,
      overallRate: load.rate,
      requests: load.requests,
      firstEntry: rotating ? nextToken : 0,
    });
    if (rotating) nextToken = (nextToken + dealt) % context.tokens.length;
    return figures;
  };

  const results: LoadtestScenarioResult[] = [];
  for (const scenario of selected) {
    if (interrupted()) throw new Error('interrupted');
    const base = { id: scenario.id, title: scenario.title, what: scenario.what };
    const unavailable = scenario.unavailable(context);
    if (unavailable) {
      log(`${scenario.id}: ${unavailable}`);
      results.push({ ...base, status: 'not measured', reason: unavailable, loads: [] });
      continue;
    }
    const loads: LoadtestLoadResult[] = [];
    for (const load of scenario.build(context)) {
      if (interrupted()) throw new Error('interrupted');
      log(
        `${scenario.id}: ${load.label}, ${load.rate}/s over ${load.connections} connections, ${WARMUP_SECONDS} s warm-up then ${load.seconds} s`,
      );
      await run(load, WARMUP_SECONDS);
      const result = resultOf(load, await run(load, load.seconds));
      const { figures } = result;
      log(
        `  ${figures.okPerS.toFixed(1)} 2xx/s, p50 ${ms(figures.latencyMs.p50)} ms, p97.5 ${ms(figures.latencyMs.p97_5)} ms, p99 ${ms(figures.latencyMs.p99)} ms; ` +
          `429: ${result.rateLimited}, other non-2xx: ${JSON.stringify(result.otherNon2xx)}, errors: ${figures.errors}`,
      );
      loads.push(result);
    }
    results.push({ ...base, status: 'measured', reason: null, loads });
  }
  return results;
}
