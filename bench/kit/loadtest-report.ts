// The loadtest's record: what ran against which deployment with which tokens, each load's figures
// (one "deployment" where the bench has project and reference), its table with the warnings it
// leads with. The record is one line of runs.jsonl in --out, beside the bench's runs but of its own
// kind ('loadtest'): never published (its figures are the deployment's and the network's, not the
// commit's), and no line holds a token or the JWT.
import { join } from 'node:path';
import { commitMeasured, type MachineOfRun, machineOfRun } from './checkout.js';
import { type LoadtestScenarioResult, WARMUP_SECONDS } from './loadtest-run.js';
import type { Deployment, SensorHistory } from './loadtest-scenarios.js';
import type { LoadtestTokens, RevocationOutcome } from './loadtest-tokens.js';
import { n, pad, textTable } from './report.js';
import { appendRecord } from './run-record.js';

export interface LoadtestReport {
  record: 1;
  kind: 'loadtest';
  startedAt: string;
  finishedAt: string;
  durationS: number;
  deployment: {
    /** the base URL (never with credentials) */
    url: string;
    companyId: number | null;
    units: number;
    /** analytics windows end on this UTC day */
    today: string;
    sensor: Omit<SensorHistory, 'units'> & { units: number };
  };
  plan: { rate: number; seconds: number; warmupSeconds: number; connections: number; scenarios: string[] };
  tokens: {
    /** created with the employee's JWT and revoked at the end, or given in --tokens-file */
    source: 'created' | 'file' | 'none';
    count: number;
    scopes: string[];
    /** what each carried at the asked rate */
    perTokenPerMinute: number | null;
    namePrefix: string | null;
    expiresAt: string | null;
    revoked: number | null;
    /** what the revocation could not revoke: tokens by id, or a creation that went unanswered (they expire at expiresAt) */
    leftActive: { id: string; reason: string }[];
  };
  loadGenerator: MachineOfRun & { commit: string };
  scenarios: LoadtestScenarioResult[];
  notes: string[];
}

export interface LoadtestOutcome {
  startedAt: Date;
  loadAtStart: number;
  baseUrl: URL;
  plan: { rate: number; seconds: number; connections: number; scenarios: string[] };
  deployment: Deployment;
  tokens: {
    source: LoadtestReport['tokens']['source'];
    count: number;
    scopes: string[];
    created: LoadtestTokens | null;
    revocation: RevocationOutcome | null;
  };
  scenarios: LoadtestScenarioResult[];
}

export function assembleLoadtestReport(outcome: LoadtestOutcome): LoadtestReport {
  const { startedAt, deployment, tokens, plan } = outcome;
  const finishedAt = new Date();
  return {
    record: 1,
    kind: 'loadtest',
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationS: (finishedAt.getTime() - startedAt.getTime()) / 1000,
    deployment: {
      url: outcome.baseUrl.href,
      companyId: deployment.companyId,
      units: deployment.unitIds.length,
      today: deployment.today,
      sensor: { ...deployment.sensor, units: deployment.sensor.units.length },
    },
    plan: { ...plan, warmupSeconds: WARMUP_SECONDS },
    tokens: {
      source: tokens.source,
      count: tokens.count,
      scopes: tokens.scopes,
      perTokenPerMinute: tokens.count > 0 ? (plan.rate * 60) / tokens.count : null,
      namePrefix: tokens.created?.namePrefix ?? null,
      expiresAt: tokens.created?.expiresAt.toISOString() ?? null,
      revoked: tokens.revocation?.revoked ?? null,
      leftActive: tokens.revocation?.failed ?? [],
    },
    loadGenerator: { ...machineOfRun(outcome.loadAtStart), commit: commitMeasured() },
    scenarios: outcome.scenarios,
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
    for (const load of scenario.loads) {
      const name = `${scenario.id} (${load.label})`;
      if (load.rateLimited > 0) {
        warnings.push(
          `${name}: ${load.rateLimited} answers were 429: the rate was above what the credentials may send (100 a minute a token; 600 reads a minute an employee)`,
        );
      }
      if (load.figures.okPerS < 0.9 * load.rate) {
        warnings.push(
          `${name}: ${n(load.figures.okPerS)} of the ${load.rate} 2xx/s asked: the deployment was saturated, or ${load.connections} connections were too few for its latency (--connections)`,
        );
      }
      if (load.figures.errors > 0)
        warnings.push(`${name}: ${load.figures.errors} requests failed without an answer (connection errors or 30 s timeouts)`);
    }
  }
  const { loadAverage, cpus: cores } = report.loadGenerator;
  if (Math.max(loadAverage.start, loadAverage.end) > cores) {
    warnings.push(
      `the load generator's machine was busy (1-minute load average ${n(loadAverage.start)} at the start, ${n(loadAverage.end)} at the end, on ${cores} cores): latencies include its own delays`,
    );
  }
  const { leftActive } = report.tokens;
  if (leftActive.length > 0) {
    warnings.push(
      `the revocation did not finish (${leftActive.length} failures, the first: ${leftActive[0]!.reason}): ` +
        `revoke the active tokens named "${report.tokens.namePrefix}..." in the console; they expire at ${report.tokens.expiresAt}`,
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
  const credentials =
    tokens.source === 'created'
      ? `${tokens.count} tokens created and revoked (${n(tokens.perTokenPerMinute ?? 0, 0)} requests a minute each)`
      : tokens.source === 'file'
        ? `${tokens.count} tokens from --tokens-file (${n(tokens.perTokenPerMinute ?? 0, 0)} requests a minute each)`
        : "the employee's JWT only";
  const lines = [
    `coldtrack-api loadtest of the deployment at ${report.deployment.url}: ${plan.rate} requests/s a scenario, ${plan.seconds} s runs after a ${plan.warmupSeconds} s warm-up; ${credentials}`,
    '',
    ...head,
  ];
  for (const scenario of report.scenarios) {
    if (scenario.status !== 'measured') {
      lines.push(`${pad(scenario.id, 16)} ${scenario.reason}`);
      continue;
    }
    scenario.loads.forEach((load, index) => {
      const f = load.figures;
      // no answer completed within the run: there is no latency to show
      const latency = (value: number) => (f.reqPerS > 0 ? n(value) : '-');
      const other =
        Object.entries(load.otherNon2xx)
          .map(([code, count]) => `${code}: ${count}`)
          .join(', ') || '0';
      lines.push(
        row([
          index === 0 ? scenario.id : '',
          load.label,
          String(load.rate),
          n(f.okPerS),
          latency(f.latencyMs.p50),
          latency(f.latencyMs.p97_5),
          latency(f.latencyMs.p99),
          String(load.rateLimited),
          other,
          String(f.errors),
        ]),
      );
    });
  }
  const warnings = warningsOf(report);
  if (warnings.length > 0) lines.push('', ...warnings.map((warning) => `WARNING: ${warning}`));
  return lines.join('\n');
}

/** The run's line appended to runs.jsonl in `outDir`; returns the file's path. */
export function writeLoadtestRecord(report: LoadtestReport, outDir: string): string {
  const runs = join(outDir, 'runs.jsonl');
  appendRecord(runs, report);
  return runs;
}
