// `npm run generate:slo`: the SLOs of ops/slo/slos.yml as Prometheus rules, written to
// ops/prometheus/slo-rules.yml. Per SLO, one rule group: the SLI's bad and counted requests per
// second over 5 minutes (read from http_request_duration_seconds), the error budget's burn rate
// over every window the alerts use, the bad requests in each long window, the budget left over the
// period, and the burn-rate alerts (page: critical, ticket: warning). The longer windows are
// averaged from the 5-minute records rather than read from the raw series again: a 3-day rate of
// every route's histogram on each evaluation would cost Prometheus thousands of times more.
// test/ops/slo.test.ts regenerates the file and fails when the committed one differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { z } from 'zod';

export const SOURCE_FILE = fileURLToPath(new URL('slos.yml', import.meta.url));
export const RULES_FILE = fileURLToPath(new URL('../prometheus/slo-rules.yml', import.meta.url));

const duration = z.string().regex(/^\d+[mhd]$/, 'a Prometheus duration in minutes, hours or days: 5m, 1h, 3d');
const burnWindow = z.strictObject({ long: duration, short: duration, burn_rate: z.number().positive() });
const routePattern = z.string().regex(/^\/[\w/:.-]*$/, 'a route pattern, /api/v1/api-tokens/:token_id');

const sourceSchema = z.strictObject({
  period: duration,
  alerts: z.strictObject({
    page: z.array(burnWindow).min(1),
    ticket: z.array(burnWindow).min(1),
    min_bad_requests: z.number().int().nonnegative(),
  }),
  route_groups: z.record(z.string(), z.array(routePattern).min(1)),
  slos: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[a-z]+(-[a-z]+)*$/, 'kebab-case: partner-data-availability'),
        title: z.string().min(1),
        objective: z.number().gt(0).lt(1),
        routes: z.string(),
        except_routes: z.array(routePattern).optional(),
        sli: z.enum(['availability', 'latency']),
        threshold_seconds: z.number().positive().optional(),
        what: z.string().min(1),
        alerts: z
          .array(z.enum(['page', 'ticket']))
          .min(1)
          .optional(),
      }),
    )
    .min(1),
});

export type SloSource = z.infer<typeof sourceSchema>;
export type Slo = SloSource['slos'][number];
type Severity = 'page' | 'ticket';

/** The source file, checked: every SLO names a route group, a latency SLO has its threshold. */
export function readSource(file = SOURCE_FILE): SloSource {
  const source = sourceSchema.parse(parse(readFileSync(file, 'utf8')));
  for (const slo of source.slos) {
    const group = source.route_groups[slo.routes];
    if (!group) throw new Error(`${slo.name}: no route group "${slo.routes}"`);
    for (const route of slo.except_routes ?? []) {
      if (!group.includes(route)) throw new Error(`${slo.name}: except_routes names ${route}, which is not in ${slo.routes}`);
    }
    if ((slo.sli === 'latency') !== (slo.threshold_seconds !== undefined)) {
      throw new Error(`${slo.name}: threshold_seconds is for a latency SLI, and a latency SLI needs one`);
    }
  }
  if (new Set(source.slos.map((slo) => slo.name)).size !== source.slos.length) throw new Error('two SLOs share a name');
  return source;
}

const SECONDS = { m: 60, h: 3600, d: 86_400 } as const;
export const seconds = (window: string) => Number(window.slice(0, -1)) * SECONDS[window.at(-1) as keyof typeof SECONDS];

/** The share of requests that may be bad: 1 - objective, without the float's tail (0.001, not 0.0010000000000000009). */
export const errorBudget = (slo: Slo) => Number((1 - slo.objective).toFixed(12));

/** ColdtrackPartnerDataAvailabilityFastBurn: the alert that pages, or (slow) the one that files a ticket. */
export function alertName(slo: Slo, severity: Severity) {
  const camel = slo.name.replace(/(^|-)([a-z])/g, (_, _dash: string, letter: string) => letter.toUpperCase());
  return `Coldtrack${camel}${severity === 'page' ? 'Fast' : 'Slow'}Burn`;
}

export const severitiesOf = (slo: Slo): Severity[] => slo.alerts ?? ['page', 'ticket'];

// Which responses an SLI counts, by their `status` label (see the header of slos.yml and docs/slos.md)
const NOT_COUNTED = '429';
const SERVER_ERROR = '5..';
const DID_THE_WORK = '[23]..';

/** A histogram bucket's `le` as Prometheus 2 (le="1") and 3 (le="1.0") write it. */
const le = (threshold: number) => (Number.isInteger(threshold) ? `le=~"${threshold}|${threshold}.0"` : `le="${threshold}"`);

function selector(source: SloSource, slo: Slo, ...matchers: string[]) {
  const routes = source.route_groups[slo.routes]!.filter((route) => !slo.except_routes?.includes(route));
  // Fastify answers a prefix's own route with and without the trailing slash, under two labels
  return `{job="coldtrack", route=~"(${routes.join('|')})/?", ${matchers.join(', ')}}`;
}

/** Bad and counted requests per second over 5 minutes, from the raw histogram. */
function sliRates(source: SloSource, slo: Slo): { valid: string; bad: string } {
  const rate = (metric: string, ...matchers: string[]) => `sum by (job) (rate(${metric}${selector(source, slo, ...matchers)}[5m]))`;
  if (slo.sli === 'availability') {
    const valid = rate('http_request_duration_seconds_count', `status!="${NOT_COUNTED}"`);
    // 0 rather than nothing before the first 5xx, so that the burn rate reads 0, not no data
    return { valid, bad: `${rate('http_request_duration_seconds_count', `status=~"${SERVER_ERROR}"`)}\n  or on (job)\n0 * ${valid}` };
  }
  const answered = rate('http_request_duration_seconds_count', `status=~"${DID_THE_WORK}"`);
  const fast = rate('http_request_duration_seconds_bucket', `status=~"${DID_THE_WORK}"`, le(slo.threshold_seconds!));
  return { valid: answered, bad: `${answered}\n  -\n${fast}` };
}

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const days = (window: string) => `${seconds(window) / 86_400} days`;
const percent = (ratio: number) => `${Number((ratio * 100).toFixed(4))} %`;
const lasts = (period: string, burnRate: number) => {
  const days = seconds(period) / burnRate / 86_400;
  return days >= 1 ? `${Number(days.toFixed(1))} days` : `${Number((days * 24).toFixed(1))} hours`;
};

function alertRule(source: SloSource, slo: Slo, severity: Severity): Rule {
  const windows = source.alerts[severity];
  const of = `{slo="${slo.name}"}`;
  const conditions = windows.map(({ long, short, burn_rate }) =>
    [
      `slo:error_budget_burn:rate${long}${of} > ${burn_rate}`,
      `and slo:error_budget_burn:rate${short}${of} > ${burn_rate}`,
      `and slo:sli_bad:increase${long}${of} >= ${source.alerts.min_bad_requests}`,
    ].join('\n  '),
  );
  const fastest = windows[0]!;
  const over = windows.map(({ long, short, burn_rate }) => `${burn_rate}x over both ${long} and ${short}`).join(', or ');
  return {
    alert: alertName(slo, severity),
    expr: conditions.map((condition) => `(\n  ${condition}\n)`).join('\nor\n'),
    labels: { severity: severity === 'page' ? 'critical' : 'warning' },
    annotations: {
      summary: `${slo.title}: the error budget burns {{ $value | printf "%.1f" }}x as fast as the SLO allows`,
      description:
        `SLO: ${percent(slo.objective)} of ${slo.what}, over ${days(source.period)}. Its error budget burns faster than ${over} ` +
        `(with at least ${source.alerts.min_bad_requests} bad requests in the long window): at ${fastest.burn_rate}x ` +
        `the budget lasts ${lasts(source.period, fastest.burn_rate)}.`,
      runbook_url: `docs/runbooks.md#${alertName(slo, severity).toLowerCase()}`,
    },
  };
}

function groupOf(source: SloSource, slo: Slo) {
  const labels = { slo: slo.name };
  const of = `{slo="${slo.name}"}`;
  const budget = errorBudget(slo);
  const severities = severitiesOf(slo);
  const windows = severities.flatMap((severity) => source.alerts[severity]);
  const longWindows = [...new Set(windows.map((window) => window.long))];
  const burnWindows = [...new Set(windows.flatMap((window) => [window.long, window.short]))].sort((a, b) => seconds(a) - seconds(b));
  const overWindow = (window: string) =>
    `sum_over_time(slo:sli_bad:rate5m${of}[${window}])\n  /\nsum_over_time(slo:sli_valid:rate5m${of}[${window}])`;
  const { valid, bad } = sliRates(source, slo);
  const rules: Rule[] = [
    { record: 'slo:sli_valid:rate5m', expr: valid, labels },
    { record: 'slo:sli_bad:rate5m', expr: bad, labels },
    // the share of bad requests over the window, in error budgets: 1 spends exactly the budget in the period
    ...burnWindows.map((window) => ({
      record: `slo:error_budget_burn:rate${window}`,
      expr:
        window === '5m' ? `slo:sli_bad:rate5m${of} / slo:sli_valid:rate5m${of} / ${budget}` : `(\n${overWindow(window)}\n)\n  / ${budget}`,
      labels,
    })),
    // bad requests in each long window, so that a handful on a quiet surface does not alert
    ...longWindows.map((window) => ({
      record: `slo:sli_bad:increase${window}`,
      expr: `avg_over_time(slo:sli_bad:rate5m${of}[${window}]) * ${seconds(window)}`,
      labels,
    })),
    // the share of the period's budget not spent yet (negative once overspent): the dashboard's
    { record: 'slo:error_budget:remaining_ratio', expr: `1 - (\n${overWindow(source.period)}\n) / ${budget}`, labels },
    ...severities.map((severity) => alertRule(source, slo, severity)),
  ];
  return { name: `coldtrack.slo.${slo.name}`, rules };
}

/** The text of ops/prometheus/slo-rules.yml for this source. */
export function generateSloRules(source = readSource()): string {
  const header = [
    '# GENERATED by `npm run generate:slo` from ops/slo/slos.yml: edit that file, then regenerate',
    '# (test/ops/slo.test.ts fails while this one is stale). What the SLOs are and why: docs/slos.md;',
    '# a runbook section for each alert: docs/runbooks.md. Load it beside recording-rules.yml and',
    '# alerts.yml; it reads only http_request_duration_seconds, and needs the period of samples',
    `# (${source.period}) for slo:error_budget:remaining_ratio (Prometheus keeps 15 days unless told).`,
  ];
  const body = stringify({ groups: source.slos.map((slo) => groupOf(source, slo)) }, { lineWidth: 0, aliasDuplicateObjects: false });
  return `${header.join('\n')}\n${body}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(RULES_FILE, generateSloRules());
  console.log(`wrote ${RULES_FILE}`);
}
