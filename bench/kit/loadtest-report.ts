// The loadtest's record: one line of kind 'loadtest' in runs.jsonl (its table: report.ts),
// never published (its figures are the deployment's and the network's, not a commit's); no line
// holds a token or the JWT.
import { commitMeasured } from './checkout.js';
import type { Deployment, LoadtestTokens } from './loadtest-deployment.js';
import { type LoadtestLoad, type LoadtestOptions, WARMUP_SECONDS } from './loadtest-plan.js';
import type { LoadFigures } from './load.js';
import { machineOfRun } from './run-record.js';

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
