// What the ops/ files are made of, read for the tests: the rule files and the dashboard, the
// metric names a PromQL expression reads, and the names the service exports (its registry, the
// cluster primary's counter) or the rules record.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { parse } from 'yaml';
import { createPrimaryMetrics } from '../../src/cluster.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { repoRoot } from '../helpers/entry.js';

export const OPS = join(repoRoot, 'ops');
// slo-rules.yml is generated from ops/slo/slos.yml (npm run generate:slo; test/ops/slo.test.ts)
export const RULE_FILES = ['recording-rules.yml', 'alerts.yml', 'slo-rules.yml'].map((file) => join(OPS, 'prometheus', file));
export const DASHBOARD = join(OPS, 'grafana', 'coldtrack-dashboard.json');

export interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export const rulesOf = (file: string): Rule[] =>
  (parse(readFileSync(file, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);

/** Every alert: the hand-written ones (alerts.yml) and the SLOs' burn-rate alerts (slo-rules.yml). */
export const alertRules = () => RULE_FILES.flatMap(rulesOf).filter((rule) => rule.alert);
/** Every recording rule; the SLOs' record one name per SLO, told apart by their `slo` label. */
export const recordingRules = () => RULE_FILES.flatMap(rulesOf).filter((rule) => rule.record);
export const recordedNames = () => new Set(recordingRules().map((rule) => rule.record!));

// words of PromQL that are not metric names
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'inf',
  'nan',
]);

/** The metric (or recorded) names an expression selects. Enough PromQL for the files in ops/. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/\[[^\]]*\]/g, ' '); // ranges (Grafana's $__rate_interval too)
  const names = new Set<string>();
  // a name does not follow a digit or a dot (1e3, 5m) and is not a function's (rate(...))
  for (const [, name, call] of bare.matchAll(/(?<![\w.$])([a-zA-Z_:][\w:]*)\s*(\()?/g)) {
    if (call || KEYWORDS.has(name!.toLowerCase())) continue;
    names.add(name!);
  }
  return [...names];
}

/** Every series name the service can export: each process's registry and the cluster primary's. */
export function exportedNames(): Set<string> {
  const pool = new pg.Pool({ max: 1 }); // never connects: nothing is collected here
  const metrics = [
    ...createMetrics({ pool, rollupQueueSize: () => 0, replicaState: () => 'none' }).registry.getMetricsAsArray(),
    ...createPrimaryMetrics().registry.getMetricsAsArray(),
  ];
  const names = new Set<string>();
  for (const metric of metrics) {
    const { name, type } = metric as unknown as { name: string; type: string };
    if (type === 'histogram') for (const suffix of ['_bucket', '_count', '_sum']) names.add(name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_count', '_sum']) names.add(name + suffix);
    else names.add(name);
  }
  void pool.end();
  return names;
}
