// Variants of the project's cluster against it as shipped (docs/benchmarks.md, "Cluster variants"):
// two fresh clusters from the same build (the run's own has served every scenario) in the
// "project" and "reference" slots, through the same pilot, alternation and retry. Judged cases
// (tracing: P19, usage: issue 27, noise: nothing changed) run six pairs at one rate; pool-nice one pair.
import type { Server } from './config.js';
import { cpuMsPerAnswer as cpuMsPerAnswerOf, type LoadSummary, type ServerRun, phasesLoop, summarize } from './results.js';
import { pilotOf, runBothServers, type ScenarioSetting } from './scenario-runs.js';
import { BESIDE_LOADS, type Scenario, scenarios } from './scenarios.js';
import { type Service, startProjectCluster } from './services.js';
import { startTraceSink, type TraceSink } from './trace-sink.js';

export const VARIANT_IDS = ['tracing', 'usage', 'pool-nice', 'noise'] as const;
export type VariantId = (typeof VARIANT_IDS)[number];
/** What a bare `--variants` runs: noise only when named (it measures the measurement). */
export const DEFAULT_VARIANTS: VariantId[] = ['tracing', 'usage', 'pool-nice'];

/** The least on / off (P19) and with / without (issue 27) may be: each costs at most 3 %. */
export const VARIANT_COST_LIMIT = 0.97;
/** Fresh cluster pairs a judged case runs on, even: each cluster takes each slot as often (runVariant says why). */
const JUDGED_PAIRS = 6;
/** A judged case offers both clusters this share of the lower pilot peak (runVariant says why). */
const JUDGED_RATE_SHARE = 0.6;
/** The sampling the tracing variant runs with: what docs/tracing.md tells production to use. */
export const TRACING_SAMPLE_RATIO = 0.01;

interface VariantCase {
  id: VariantId;
  scenario: string;
  /** the load whose figures are compared (the scenario's headline when unset) */
  load?: string;
  shipped: string;
  variant: string;
  /** the variant cluster's variables; `sink` is the trace sink's base URL for the case that has one */
  env(sink: string | null): Record<string, string>;
  sink?: true;
  /** a judged cost: 2xx/s of the cluster that pays it over the other's, at least VARIANT_COST_LIMIT */
  costly?: 'shipped' | 'variant';
  /** a case beside bulk pulls: each cluster's event loop beside them and alone, and the pulls a minute */
  besideBulk?: true;
}

const CASES: Record<VariantId, VariantCase> = {
  tracing: {
    id: 'tracing',
    scenario: 'small-page',
    shipped: 'tracing off',
    variant: `tracing on at ${TRACING_SAMPLE_RATIO * 100} %`,
    env: (sink) => ({
      OTEL_EXPORTER_OTLP_ENDPOINT: sink!,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(TRACING_SAMPLE_RATIO),
    }),
    sink: true,
    costly: 'variant',
  },
  usage: {
    id: 'usage',
    scenario: 'small-page',
    shipped: 'usage counted',
    variant: 'usage not counted',
    env: () => ({ COLDTRACK_BENCH_WITHOUT_TOKEN_USAGE: '1' }),
    costly: 'shipped',
  },
  noise: {
    id: 'noise',
    scenario: 'small-page',
    shipped: 'shipped',
    variant: 'shipped again',
    env: () => ({}),
    costly: 'variant',
  },
  'pool-nice': {
    id: 'pool-nice',
    scenario: 'bulk-csv-beside-mixed',
    load: BESIDE_LOADS.beside,
    shipped: 'THREAD_POOL_NICE 0',
    variant: 'THREAD_POOL_NICE 10',
    env: () => ({ THREAD_POOL_NICE: '10' }),
    besideBulk: true,
  },
};

/**
 * The scenario a case runs, on both slots (bulk-csv-beside-mixed is otherwise the project's alone).
 * A judged case's measured runs send a steady JUDGED_RATE_SHARE of the lower pilot peak to both
 * clusters (its pilots still flood, to measure that peak).
 */
function scenarioOf(variantCase: VariantCase): Scenario {
  const scenario = scenarios.find((candidate) => candidate.id === variantCase.scenario)!;
  if (!variantCase.costly) return { ...scenario, projectOnly: false };
  return {
    ...scenario,
    projectOnly: false,
    build: (context) =>
      scenario.build(context).map((phase) =>
        phase.map((load) => {
          const peak = context.pilotPeak?.(load.label) ?? null;
          return peak === null ? load : { ...load, overallRate: Math.max(5, Math.round(peak * JUDGED_RATE_SHARE)) };
        }),
      ),
  };
}

/** The scenario a case runs (tests). */
export const variantScenario = (id: VariantId): Scenario => scenarioOf(CASES[id]);
/** Fresh cluster pairs a case runs on: each runs the whole scenario, pilots included. */
const pairsOf = (variantCase: VariantCase) => (variantCase.costly ? JUDGED_PAIRS : 1);
/** The scenarios the selected cases run, once a pair, for the credential plan. */
export const variantScenarios = (ids: VariantId[]): Scenario[] =>
  ids.flatMap((id) => Array.from({ length: pairsOf(CASES[id]) }, () => scenarioOf(CASES[id])));
/** Their warm-ups, one pilot a fresh cluster, for the credential plan. */
export const variantWarmups = (ids: VariantId[]): Scenario[] => variantScenarios(ids).flatMap((scenario) => [scenario, scenario]);

export interface VariantCluster {
  /** the compared load, merged over the cluster's runs */
  load: LoadSummary;
  /** the workers' CPU time per answer of that load (ms), over the cluster's runs; null when unknown */
  cpuMsPerAnswer: number | null;
  /** cases beside bulk pulls: the worst event-loop p99 of the phases beside the pulls, and of the control phases */
  loopBesideP99Ms?: number | null;
  loopControlP99Ms?: number | null;
  /** cases beside bulk pulls: completed pulls a minute */
  pullsPerMinute?: number | null;
}

export interface VariantResult {
  id: VariantId;
  scenario: string;
  /** the compared load (null when the case names none and nothing ran) */
  load: string | null;
  shipped: string;
  variant: string;
  /** null when measured, else why not */
  notMeasured: string | null;
  clusters: { shipped: VariantCluster; variant: VariantCluster } | null;
  /**
   * The judged cases' cost: the other cluster's worker CPU time per answer over the paying one's
   * (0.97 = 3 % more CPU a request). CPU time, not req/s: on a shared machine req/s varies by more
   * than a 3 % limit, the CPU a worker spends on an answer does not.
   */
  ratio: number | null;
  /** 2xx/s of the paying cluster over the other's: offered the same rate, below 1 says it could not keep up */
  reqPerSRatio: number | null;
  /** what the trace sink received over the variant's life (pilot, warm-up and runs) */
  sink: { requests: number; bytes: number; spans: number; unreadable: number } | null;
}

const SLOT: Record<'shipped' | 'variant', Server> = { shipped: 'project', variant: 'reference' };

/**
 * A pair's runs as if the shipped cluster had run in the project slot: a pair run the other way
 * round (the variant in the project slot) has its runs' slots named back, so the figures of each
 * cluster are read from SLOT whichever way its pairs ran.
 */
export const runsInRecordSlots = (runs: ServerRun[], swapped: boolean): ServerRun[] =>
  swapped ? runs.map((run) => ({ ...run, server: run.server === 'project' ? 'reference' : 'project' })) : runs;

function clusterOf(runs: ServerRun[], slot: Server, variantCase: VariantCase, label: string): VariantCluster | null {
  const load = summarize(runs, slot)?.loads[label];
  if (!load) return null;
  const cpuMsPerAnswer = cpuMsPerAnswerOf(runs, label, slot);
  if (!variantCase.besideBulk) return { load, cpuMsPerAnswer };
  const pulls = summarize(runs, slot)?.loads[BESIDE_LOADS.pulls];
  return {
    load,
    cpuMsPerAnswer,
    loopBesideP99Ms: phasesLoop(runs, BESIDE_LOADS.beside, slot)?.p99Ms ?? null,
    loopControlP99Ms: phasesLoop(runs, BESIDE_LOADS.control, slot)?.p99Ms ?? null,
    pullsPerMinute: pulls ? pulls.okPerS * 60 : null,
  };
}

/** One case: its two clusters (and the sink) started, the scenario against both, everything stopped. */
async function runVariant(
  variantCase: VariantCase,
  index: number,
  options: { databaseUrl: string; redisUrl: string; setting: Omit<ScenarioSetting, 'clusters'> },
): Promise<VariantResult> {
  const scenario = scenarioOf(variantCase);
  const base = { id: variantCase.id, scenario: scenario.id, shipped: variantCase.shipped, variant: variantCase.variant };
  const without = (why: string): VariantResult => ({
    ...base,
    load: variantCase.load ?? null,
    notMeasured: why,
    clusters: null,
    ratio: null,
    reqPerSRatio: null,
    sink: null,
  });
  if (scenario.requiresSensor && !options.setting.sensor.available) return without(options.setting.sensor.reason);
  const { log } = options.setting;
  let sink: TraceSink | null = null;
  const started: Partial<Record<'shipped' | 'variant', Service>> = {};
  const start = (slot: 'shipped' | 'variant', name: string, env: Record<string, string>) =>
    startProjectCluster({ name, databaseUrl: options.databaseUrl, redisUrl: options.redisUrl, env }, log).then(
      (service) => (started[slot] = service),
    );
  try {
    if (variantCase.sink) sink = await startTraceSink();
    // A judged case: six fresh pairs, the slots swapped every other pair (the "reference" slot came
    // out ahead whichever value it held: docs/benchmarks.md, "Cluster variants"), at one steady rate
    // for both (flooded, the CPU time an answer drifts with how many requests a loop turn takes).
    const runs: ServerRun[] = [];
    for (let pair = 0; pair < pairsOf(variantCase); pair++) {
      // side by side; each kept in `started` as soon as it is up, so the clean-up stops one whose partner failed
      const starting = await Promise.allSettled([
        start('shipped', `project, ${variantCase.shipped}`, {}),
        start('variant', `project, ${variantCase.variant}`, variantCase.env(sink?.url ?? null)),
      ]);
      for (const outcome of starting) if (outcome.status === 'rejected') throw outcome.reason;
      const swapped = variantCase.costly !== undefined && pair % 2 === 1;
      const [inProject, inReference] = swapped ? (['variant', 'shipped'] as const) : (['shipped', 'variant'] as const);
      const clusters = { project: started[inProject]!, reference: started[inReference]! };
      for (const service of [clusters.project, clusters.reference]) await pilotOf(service, scenario, options.setting.context);
      log(
        `variant ${variantCase.id}: ${scenario.id}, ${variantCase[inProject]} ("project") and ${variantCase[inReference]} ("reference"), both warmed` +
          (variantCase.costly ? ` (pair ${pair + 1} of ${JUDGED_PAIRS})` : ''),
      );
      const pilotPeaks = variantCase.costly ? 'lower' : 'own';
      runs.push(...runsInRecordSlots(await runBothServers(scenario, index + pair, { ...options.setting, clusters, pilotPeaks }), swapped));
      // stopped gracefully before the sink is read: each worker sends what its batch still holds
      await stopStarted(started);
    }
    // the scenario's headline load unless the case names another
    const label = variantCase.load ?? runs[0]?.loads[0]?.label ?? '';
    const shipped = clusterOf(runs, SLOT.shipped, variantCase, label);
    const changed = clusterOf(runs, SLOT.variant, variantCase, label);
    if (!shipped || !changed) return without(`no figures for ${label}`);
    const figures = { shipped, variant: changed };
    const costly = variantCase.costly;
    const other = costly === 'shipped' ? 'variant' : 'shipped';
    const reqPerSRatio = costly ? figures[costly].load.okPerS / figures[other].load.okPerS : null;
    const [paying, free] = costly ? [figures[costly].cpuMsPerAnswer, figures[other].cpuMsPerAnswer] : [null, null];
    const ratio = paying && free ? free / paying : null;
    const received = sink && { requests: sink.requests, bytes: sink.bytes, spans: sink.spans, unreadable: sink.unreadable };
    return { ...base, load: label, notMeasured: null, clusters: figures, ratio, reqPerSRatio, sink: received };
  } catch (error) {
    if (options.setting.interrupted()) throw error;
    return without(`variant ${variantCase.id} failed: ${(error as Error).message}`);
  } finally {
    await stopStarted(started);
    await sink?.close();
  }
}

/** Stops whichever of a case's clusters are running (idempotent: they leave `started`). */
async function stopStarted(started: Partial<Record<'shipped' | 'variant', Service>>) {
  const services = Object.values(started);
  delete started.shipped;
  delete started.variant;
  await Promise.all(services.map((service) => service.stop()));
}

/** The selected cases, one after the other, each mirroring the previous one's order. */
export async function runVariants(
  ids: VariantId[],
  options: { databaseUrl: string; redisUrl: string; setting: Omit<ScenarioSetting, 'clusters'> },
): Promise<VariantResult[]> {
  const results: VariantResult[] = [];
  for (const [index, id] of ids.entries()) {
    if (options.setting.interrupted()) throw new Error('interrupted');
    const result = await runVariant(CASES[id], index, options);
    options.setting.log(variantLine(result));
    results.push(result);
  }
  return results;
}

const fixed = (value: number | null | undefined, digits = 1) =>
  typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '?';

/** One line a case, for the run's output. */
export function variantLine(result: VariantResult): string {
  const head = `variant ${result.id} (${result.scenario}, ${result.shipped} vs ${result.variant})`;
  if (result.notMeasured !== null || !result.clusters) return `${head}: not measured: ${result.notMeasured}`;
  const { shipped: a, variant: b } = result.clusters;
  // a load that shares its phase (the mixed traffic beside the pulls) has no CPU time of its own
  const cpu = (cluster: VariantCluster) =>
    cluster.cpuMsPerAnswer === null ? '' : `, ${fixed(cluster.cpuMsPerAnswer, 3)} ms CPU an answer`;
  const figures = (cluster: VariantCluster) =>
    `${fixed(cluster.load.okPerS)} 2xx/s, p99 ${fixed(cluster.load.latencyMs.p99)} ms${cpu(cluster)}`;
  const parts = [`${result.load}: ${result.shipped} ${figures(a)}; ${result.variant} ${figures(b)}`];
  if (result.ratio !== null) {
    const met = result.ratio >= VARIANT_COST_LIMIT ? 'met' : 'MISSED';
    parts.push(
      `CPU ratio ${result.ratio.toFixed(3)} (limit >= ${VARIANT_COST_LIMIT}: ${met}), req/s ratio ${fixed(result.reqPerSRatio, 3)}`,
    );
  } else if (result.reqPerSRatio !== null) {
    parts.push(`CPU ratio unknown (no worker CPU time), req/s ratio ${fixed(result.reqPerSRatio, 3)}: not judged`);
  }
  if (CASES[result.id].besideBulk) {
    parts.push(
      `loop p99 beside bulk ${fixed(a.loopBesideP99Ms)} vs ${fixed(b.loopBesideP99Ms)} ms (control ${fixed(a.loopControlP99Ms)} vs ${fixed(b.loopControlP99Ms)} ms); ` +
        `pulls ${fixed(a.pullsPerMinute)} vs ${fixed(b.pullsPerMinute)} a minute`,
    );
  }
  if (result.sink) parts.push(sinkWords(result.sink));
  return `${head}: ${parts.join('; ')}`;
}

export const sinkWords = (sink: NonNullable<VariantResult['sink']>) =>
  `the sink received ${sink.spans} spans in ${sink.requests} exports (${(sink.bytes / 1024).toFixed(1)} kB` +
  `${sink.unreadable > 0 ? `, ${sink.unreadable} unreadable` : ''})`;
