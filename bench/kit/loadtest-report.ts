// The loadtest's record and its table. The record is one line of kind 'loadtest' in runs.jsonl,
// never published (its figures are the deployment's and the network's, not a commit's); no line
// holds a token or the JWT.
import { commitMeasured } from './checkout.js';
import type { Deployment, LoadtestTokens } from './loadtest-deployment.js';
import { type LoadtestLoad, type LoadtestOptions, WARMUP_SECONDS } from './loadtest-plan.js';
import type { LoadFigures } from './load.js';
import { n, pad, textTable } from './report.js';
import { busyWarning, machineOfRun } from './run-record.js';

/** A load's figures, with its 429s (the credentials' limits) apart from every other non-2xx by status. */
export function loadResult({ label, rate, connections, seconds, requests }: LoadtestLoad, figures: LoadFigures) {
  const otherNon2xx = Object.fromEntries(Object.entries(figures.statusCodes).filter(([code]) => !code.startsWith('2') && code !== '429'));
  const rateLimited = figures.statusCodes['429'] ?? 0;
  return { label, rate, connections, seconds, distinctRequests: requests.length, figures, rateLimited, otherNon2xx };
}

export interface LoadtestScenarioResult {
  id: string;
  title: string;
  status: 'measured' | 'not measured';
  reason: string | null;
  loads: ReturnType<typeof loadResult>[];
}

export type LoadtestReport = ReturnType<typeof assembleLoadtestReport>;

export function assembleLoadtestReport(run: {
  startedAt: Date;
  loadAtStart: number;
  options: LoadtestOptions;
  deployment: Deployment;
  scenarios: LoadtestScenarioResult[];
  /** the tokens used (created, or from --tokens-file) and their scopes; those created and revoked */
  tokens: { count: number; scopes: string[]; created: LoadtestTokens | null };
}) {
  const { startedAt, options, deployment, tokens } = run;
  const finishedAt = new Date();
  const { rate, seconds, connections, scenarioIds } = options;
  const source: 'created' | 'file' | 'none' = tokens.created ? 'created' : options.givenTokens ? 'file' : 'none';
  return {
    record: 1,
    kind: 'loadtest',
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    deployment: {
      url: options.baseUrl.href,
      companyId: deployment.companyId,
      units: deployment.unitIds.length,
      today: deployment.today,
      sensor: { ...deployment.sensor, units: deployment.sensor.units.length },
    },
    plan: { rate, seconds, connections, scenarios: scenarioIds, warmupSeconds: WARMUP_SECONDS },
    tokens: {
      source,
      count: tokens.count,
      scopes: tokens.scopes,
      perTokenPerMinute: tokens.count > 0 ? (rate * 60) / tokens.count : null,
      namePrefix: tokens.created?.namePrefix ?? null,
      expiresAt: tokens.created?.expiresAt.toISOString() ?? null,
      revoked: tokens.created?.outcome?.revoked ?? null,
      /** what the revocation could not revoke (they expire at expiresAt) */
      leftActive: tokens.created?.outcome?.failed ?? [],
    },
    loadGenerator: { ...machineOfRun(run.loadAtStart), commit: commitMeasured() },
    scenarios: run.scenarios,
  };
}

/** What to look at first: 429s, rates not reached, errors, a busy load generator, tokens left active. */
function warningsOf(report: LoadtestReport): string[] {
  const warnings: string[] = [];
  for (const { id, loads } of report.scenarios) {
    for (const { label, rate, rateLimited, connections, figures } of loads) {
      const name = `WARNING: ${id} (${label})`;
      if (rateLimited > 0)
        warnings.push(
          `${name}: ${rateLimited} answers were 429: the rate was above what the credentials may send (100 a minute a token; 600 reads a minute an employee)`,
        );
      if (figures.okPerS < 0.9 * rate)
        warnings.push(
          `${name}: ${n(figures.okPerS)} of the ${rate} 2xx/s asked: the deployment was saturated, or ${connections} connections were too few for its latency (--connections)`,
        );
      if (figures.errors > 0)
        warnings.push(`${name}: ${figures.errors} requests failed without an answer (connection errors or 30 s timeouts)`);
    }
  }
  // the bench's rule for a busy machine, here the load generator's: its delays are in the latencies
  const busy = busyWarning(report.loadGenerator);
  if (busy) warnings.push(busy);
  const { leftActive, namePrefix, expiresAt } = report.tokens;
  if (leftActive.length > 0) {
    warnings.push(
      `WARNING: the revocation did not finish (${leftActive.length} failures, the first: ${leftActive[0]!.reason}): ` +
        `revoke the active tokens named "${namePrefix}..." in the console; they expire at ${expiresAt}`,
    );
  }
  return warnings;
}

export function formatLoadtestTable(report: LoadtestReport): string {
  const { row, head } = textTable(
    [
      ['scenario', 16],
      ['load', 22],
      ['asked/s', 8],
      ['2xx/s', 9],
      ['p50 ms', 8],
      ['p97.5 ms', 9],
      ['p99 ms', 8],
      ['429', 6],
      ['other non-2xx', 16],
      ['errors', 7],
    ],
    2,
  );
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
      lines.push(
        row([
          index === 0 ? scenario.id : '',
          label,
          String(rate),
          n(f.okPerS),
          ...latencies,
          String(rateLimited),
          other.join(', ') || '0',
          String(f.errors),
        ]),
      );
    });
  }
  const warnings = warningsOf(report);
  if (warnings.length > 0) lines.push('', ...warnings);
  return lines.join('\n');
}
