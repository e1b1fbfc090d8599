// A loadtest as one JSON line of runs.jsonl, beside the bench's runs (run-record.ts) but of its own
// kind: 'loadtest', with the deployment it measured. It is never published: its figures are the
// deployment's and the network's, not the commit's, so it never reaches bench/history.jsonl or
// docs/benchmarks.md (history.ts reads only 'load' and 'scale' lines from the history).
import { type CommitFacts, commitOfRun } from './git-state.js';
import type { LoadtestReport } from './loadtest-report.js';
import type { MachineFacts } from './run-record.js';

export interface LoadtestLoadRow {
  label: string;
  /** requests a second asked */
  rate: number;
  okPerS: number;
  p50Ms: number | null;
  p97_5Ms: number | null;
  p99Ms: number | null;
  rateLimited: number;
  non2xx: number;
  errors: number;
}

export interface LoadtestRecord {
  record: 1;
  kind: 'loadtest';
  /** the run's start, ISO 8601 */
  date: string;
  durationS: number;
  /** the kit's checkout, not the deployment's code */
  commit: CommitFacts;
  /** the load generator's machine */
  machine: MachineFacts;
  /** the deployment load-tested: an external URL, not a cluster the kit started */
  target: { url: string; companyId: number | null };
  rate: number;
  seconds: number;
  tokens: { source: LoadtestReport['tokens']['source']; count: number; leftActive: number };
  scenarios: { id: string; notMeasured: string | null; loads: LoadtestLoadRow[] }[];
}

export function loadtestRecord(report: LoadtestReport, commit: CommitFacts = commitOfRun()): LoadtestRecord {
  const { loadGenerator } = report;
  return {
    record: 1,
    kind: 'loadtest',
    date: report.startedAt,
    durationS: report.durationS,
    commit,
    machine: {
      cpuModel: loadGenerator.cpuModel,
      cores: loadGenerator.cpus,
      memoryGb: null,
      node: loadGenerator.node,
      postgres: null,
      redis: null,
      loadAverage: loadGenerator.loadAverage,
    },
    target: { url: report.deployment.url, companyId: report.deployment.companyId },
    rate: report.plan.rate,
    seconds: report.plan.seconds,
    tokens: { source: report.tokens.source, count: report.tokens.count, leftActive: report.tokens.leftActive.length },
    scenarios: report.scenarios.map((scenario) => ({
      id: scenario.id,
      notMeasured: scenario.status === 'measured' ? null : (scenario.reason ?? 'not measured'),
      loads: scenario.loads.map((load) => {
        const answered = load.figures.reqPerS > 0;
        return {
          label: load.label,
          rate: load.rate,
          okPerS: load.figures.okPerS,
          p50Ms: answered ? load.figures.latencyMs.p50 : null,
          p97_5Ms: answered ? load.figures.latencyMs.p97_5 : null,
          p99Ms: answered ? load.figures.latencyMs.p99 : null,
          rateLimited: load.rateLimited,
          non2xx: load.figures.non2xx,
          errors: load.figures.errors,
        };
      }),
    })),
  };
}
