// The loadtest's record: what ran against which deployment with which tokens, each load's figures
// (one "deployment" where the bench has project and reference), its table (report.ts's cells)
// with the warnings it leads with. The record is one line of runs.jsonl in --out, beside the
// bench's runs but of its own kind ('loadtest'): never published (its figures are the deployment's
// and the network's, not the commit's), and no line holds a token or the JWT.
import { commitMeasured, machineOfRun } from './checkout.js';
import type { Deployment, LoadtestTokens } from './loadtest-deployment.js';
import { type LoadtestLoad, type LoadtestOptions, WARMUP_SECONDS } from './loadtest-plan.js';
import type { LoadFigures } from './load.js';
import { n, pad, textTable } from './report.js';

/** A load's figures: 429s (the rate was above what the tokens, or the employee, may send) and every other non-2xx by status apart. */
export function loadResult({ label, rate, connections, seconds, requests }: LoadtestLoad, figures: LoadFigures) {
  const otherNon2xx = Object.fromEntries(Object.entries(figures.statusCodes).filter(([code]) => !code.startsWith('2') && code !== '429'));
  return {
    label,
    rate,
    connections,
    seconds,
    distinctRequests: requests.length,
    figures,
    rateLimited: figures.statusCodes['429'] ?? 0,
    otherNon2xx,
  };
}

export interface LoadtestScenarioResult {
  id: string;
  title: string;
  what: string;
  status: 'measured' | 'not measured';
  reason: string | null;
  loads: ReturnType<typeof loadResult>[];
}

export interface LoadtestOutcome {
  startedAt: Date;
  loadAtStart: number;
  options: LoadtestOptions;
  deployment: Deployment;
  scenarios: LoadtestScenarioResult[];
  /** the tokens used (created, or given in --tokens-file) with their scopes; those created, and revoked */
  tokens: { count: number; scopes: string[]; created: LoadtestTokens | null };
}

export type LoadtestReport = ReturnType<typeof assembleLoadtestReport>;

export function assembleLoadtestReport({ startedAt, loadAtStart, options, deployment, tokens, scenarios }: LoadtestOutcome) {
  const finishedAt = new Date();
  const { rate, seconds, connections, scenarioIds } = options;
  /** created with the employee's JWT and revoked at the end, or given in --tokens-file */
  const source: 'created' | 'file' | 'none' = tokens.created ? 'created' : options.givenTokens ? 'file' : 'none';
  return {
    record: 1,
    kind: 'loadtest',
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    deployment: {
      /** the base URL (never with credentials) */
      url: options.baseUrl.href,
      companyId: deployment.companyId,
      units: deployment.unitIds.length,
      /** analytics windows end on this UTC day */
      today: deployment.today,
      sensor: { ...deployment.sensor, units: deployment.sensor.units.length },
    },
    plan: { rate, seconds, connections, scenarios: scenarioIds, warmupSeconds: WARMUP_SECONDS },
    tokens: {
      source,
      count: tokens.count,
      scopes: tokens.scopes,
      /** what each carried at the asked rate */
      perTokenPerMinute: tokens.count > 0 ? (rate * 60) / tokens.count : null,
      namePrefix: tokens.created?.namePrefix ?? null,
      expiresAt: tokens.created?.expiresAt.toISOString() ?? null,
      revoked: tokens.created?.outcome?.revoked ?? null,
      /** what the revocation could not revoke: tokens by id, or a creation that went unanswered (they expire at expiresAt) */
      leftActive: tokens.created?.outcome?.failed ?? [],
    },
    loadGenerator: { ...machineOfRun(loadAtStart), commit: commitMeasured() },
    scenarios,
    notes: [
      "2xx/s and every figure are the measured run's, after its warm-up; latency percentiles are autocannon's, from the load generator: they include the network to the deployment.",
      'Each scenario runs at the asked rate, spread over the tokens in turn, each token under 90 of its 100 requests a minute: ' +
        'a 429 means a token (or the employee) was over its limit, which should not happen unless something else uses it.',
      'Analytics windows end on the day of the run; sensor windows end on the last day of the sensor history the probe found.',
    ],
  };
}

/** Lines that say what to look at first: 429s, rates not reached, errors, tokens left active, a busy load generator. */
export function warningsOf(report: LoadtestReport): string[] {
  const warnings: string[] = [];
  for (const scenario of report.scenarios) {
    for (const { label, rate, rateLimited, connections, figures } of scenario.loads) {
      const name = `${scenario.id} (${label})`;
      if (rateLimited > 0) {
        warnings.push(
          `${name}: ${rateLimited} answers were 429: the rate was above what the credentials may send (100 a minute a token; 600 reads a minute an employee)`,
        );
      }
      if (figures.okPerS < 0.9 * rate) {
        warnings.push(
          `${name}: ${n(figures.okPerS)} of the ${rate} 2xx/s asked: the deployment was saturated, or ${connections} connections were too few for its latency (--connections)`,
        );
      }
      if (figures.errors > 0)
        warnings.push(`${name}: ${figures.errors} requests failed without an answer (connection errors or 30 s timeouts)`);
    }
  }
  const { loadAverage, cpus: cores } = report.loadGenerator;
  if (Math.max(loadAverage.start, loadAverage.end) > cores) {
    warnings.push(
      `the load generator's machine was busy (1-minute load average ${n(loadAverage.start)} at the start, ${n(loadAverage.end)} at the end, on ${cores} cores): latencies include its own delays`,
    );
  }
  const { leftActive, namePrefix, expiresAt } = report.tokens;
  if (leftActive.length > 0) {
    warnings.push(
      `the revocation did not finish (${leftActive.length} failures, the first: ${leftActive[0]!.reason}): ` +
        `revoke the active tokens named "${namePrefix}..." in the console; they expire at ${expiresAt}`,
    );
  }
  return warnings;
}

export function formatLoadtestTable(report: LoadtestReport): string {
  const columns: [string, number][] = [
    ['scenario', 16],
    ['load', 22],
    ['asked/s', 8],
    ['2xx/s', 9],
    ['p50 ms', 8],
    ['p97.5 ms', 9],
  ];
  const { row, head } = textTable([...columns, ['p99 ms', 8], ['429', 6], ['other non-2xx', 16], ['errors', 7]], 2);
  const { tokens, plan } = report;
  const each = `(${n(tokens.perTokenPerMinute ?? 0, 0)} requests a minute each)`;
  const credentials = {
    created: `${tokens.count} tokens created and revoked ${each}`,
    file: `${tokens.count} tokens from --tokens-file ${each}`,
    none: "the employee's JWT only",
  }[tokens.source];
  const lines = [
    `coldtrack-api loadtest of the deployment at ${report.deployment.url}: ${plan.rate} requests/s a scenario, ${plan.seconds} s runs after a ${plan.warmupSeconds} s warm-up; ${credentials}`,
    '',
    ...head,
  ];
  for (const scenario of report.scenarios) {
    if (scenario.status !== 'measured') lines.push(`${pad(scenario.id, 16)} ${scenario.reason}`);
    scenario.loads.forEach(({ label, rate, figures: f, rateLimited, otherNon2xx }, index) => {
      // no answer completed within the run: there is no latency to show
      const latencies = [f.latencyMs.p50, f.latencyMs.p97_5, f.latencyMs.p99].map((value) => (f.reqPerS > 0 ? n(value) : '-'));
      const other = Object.entries(otherNon2xx).map(([code, count]) => `${code}: ${count}`);
      const counts = [String(rateLimited), other.join(', ') || '0', String(f.errors)];
      lines.push(row([index === 0 ? scenario.id : '', label, String(rate), n(f.okPerS), ...latencies, ...counts]));
    });
  }
  const warnings = warningsOf(report);
  if (warnings.length > 0) lines.push('', ...warnings.map((warning) => `WARNING: ${warning}`));
  return lines.join('\n');
}
