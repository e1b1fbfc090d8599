// The cluster variants (bench/kit/variants.ts) and P19: the loopback trace sink counts the spans
// the service's own exporters send it (both OTLP encodings, two services' resources in one
// export); P19 is judged from the tracing case's figures, on / off 2xx/s against 0.97, and only
// once the sink shows spans arrived, from each cluster's worker CPU time an answer; the command
// line picks the cases.
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import t from 'tap';
import { cpuMsPerAnswer, type ServerRun, summarize } from '../../bench/kit/results.js';
import { readRunOptions } from '../../bench/kit/run-options.js';
import { evaluateTargets } from '../../bench/kit/targets.js';
import { startTraceSink } from '../../bench/kit/trace-sink.js';
import { kitConfig, layoutOf } from '../../bench/kit/config.js';
import { countingCredentials } from '../../bench/kit/credentials.js';
import { pilotPeakOf, planCredentials } from '../../bench/kit/scenario-runs.js';
import type { BuildContext } from '../../bench/kit/scenarios.js';
import {
  runsInRecordSlots,
  type VariantResult,
  variantLine,
  variantScenario,
  variantScenarios,
  variantWarmups,
} from '../../bench/kit/variants.js';
import { latencyHistogram } from './run-fixtures.js';

/** `count` spans of a service, one a trace, sent to the sink through `exporter` and flushed. */
async function exportSpans(exporter: SpanExporter, service: string, count: number) {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': service }),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('variants-test');
  for (let i = 0; i < count; i++) tracer.startSpan(`span ${i}`, { attributes: { i } }).end();
  await provider.forceFlush();
  await provider.shutdown();
}

for (const [encoding, Exporter] of [
  ['http/protobuf', OtlpProtobufExporter],
  ['http/json', OtlpJsonExporter],
] as const) {
  t.test(`the sink counts the spans of an ${encoding} export`, async (t) => {
    const sink = await startTraceSink();
    t.teardown(() => sink.close());
    const url = `${sink.url}/v1/traces`;
    await exportSpans(new Exporter({ url }), 'coldtrack-api', 3);
    await exportSpans(new Exporter({ url }), 'another', 2);
    t.equal(sink.spans, 5);
    t.equal(sink.unreadable, 0);
    t.ok(sink.requests >= 2 && sink.requests <= 5, `${sink.requests} exports`);
    t.ok(sink.bytes > 0);
  });
}

t.test('the sink answers other paths 404 and counts nothing', async (t) => {
  const sink = await startTraceSink();
  t.teardown(() => sink.close());
  const answer = await fetch(`${sink.url}/v1/metrics`, { method: 'POST', body: 'x' });
  t.equal(answer.status, 404);
  t.equal(sink.requests, 0);
});

const load = (okPerS: number, p99: number, statusCodes: Record<string, number> = { '200': okPerS * 10 }) => ({
  durationS: 10,
  latencyHistogram: latencyHistogram(p99 / 3, p99),
  responses: okPerS * 10,
  reqPerS: okPerS,
  okPerS,
  peakPerS: okPerS,
  latencyMs: { mean: p99 / 3, p50: p99 / 3, p97_5: p99, p99, max: p99 * 2 },
  errors: 0,
  timeouts: 0,
  non2xx: Object.entries(statusCodes).reduce((sum, [code, count]) => sum + (code.startsWith('2') ? 0 : count), 0),
  statusCodes,
  mbPerS: 1,
});

/** The tracing case as kit/variants.ts hands it over: off in the "project" slot, on in the "reference" one. */
function tracingCase(
  off: number,
  on: number,
  spans: number,
  onCodes?: Record<string, number>,
  cpuMs = { off: 1, on: 1.02 },
): VariantResult {
  const label = 'revenue page_size 10';
  const run = (server: ServerRun['server'], okPerS: number, p99: number, codes?: Record<string, number>): ServerRun => ({
    server,
    position: 0,
    loads: [{ phase: 0, label, connections: 24, overallRate: null, requestsInList: 120, figures: load(okPerS, p99, codes) }],
    memory: [],
    loop: null,
  });
  const runs = [run('project', off, 20), run('reference', on, 30, onCodes)];
  return {
    id: 'tracing',
    scenario: 'small-page',
    load: label,
    shipped: 'tracing off',
    variant: 'tracing on at 1 %',
    notMeasured: null,
    clusters: {
      shipped: { load: summarize(runs, 'project')!.loads[label]!, cpuMsPerAnswer: cpuMs.off },
      variant: { load: summarize(runs, 'reference')!.loads[label]!, cpuMsPerAnswer: cpuMs.on },
    },
    ratio: cpuMs.off / cpuMs.on,
    reqPerSRatio: on / off,
    sink: { requests: 4, bytes: 9000, spans, unreadable: 0 },
  };
}

t.test("CPU time an answer: each cluster's own runs, null when a run has no CPU time", async (t) => {
  const label = 'revenue page_size 10';
  const run = (server: ServerRun['server'], okPerS: number, cpuMs: number | null): ServerRun => ({
    server,
    position: 0,
    loads: [
      { phase: 0, label, connections: 24, overallRate: null, requestsInList: 120, figures: load(okPerS, 20), phaseWorkerCpuMs: cpuMs },
    ],
    memory: [],
    loop: null,
  });
  // 10 s runs: 10,000 and 12,000 answers
  const runs = [run('project', 1000, 5000), run('reference', 1000, 6000), run('reference', 1200, 6600), run('project', 1200, 6000)];
  t.equal(cpuMsPerAnswer(runs, label, 'project'), 11_000 / 22_000);
  t.equal(cpuMsPerAnswer(runs, label, 'reference'), 12_600 / 22_000);
  t.equal(cpuMsPerAnswer([...runs, run('reference', 1000, null)], label, 'reference'), null);
});

t.test('a pair run with the slots swapped counts each cluster as its own', async (t) => {
  const label = 'revenue page_size 10';
  const run = (server: ServerRun['server'], cpuMs: number): ServerRun => ({
    server,
    position: 0,
    loads: [{ phase: 0, label, connections: 24, overallRate: null, requestsInList: 120, figures: load(1000, 20), phaseWorkerCpuMs: cpuMs }],
    memory: [],
    loop: null,
  });
  // the shipped cluster spends 5,000 ms of CPU a run, the variant 6,000, whichever slot each ran in
  const straight = [run('project', 5000), run('reference', 6000)];
  const swapped = [run('project', 6000), run('reference', 5000)];
  t.same(runsInRecordSlots(straight, false), straight, 'a pair run the usual way is kept as it ran');
  const runs = [...runsInRecordSlots(straight, false), ...runsInRecordSlots(swapped, true)];
  t.equal(cpuMsPerAnswer(runs, label, 'project'), 10_000 / 20_000, "the shipped cluster's runs, from both pairs");
  t.equal(cpuMsPerAnswer(runs, label, 'reference'), 12_000 / 20_000, "the variant's runs, from both pairs");
  t.equal(swapped[0]!.server, 'project', 'the runs as recorded are not changed');
});

const p19 = (variants: VariantResult[] | null) =>
  evaluateTargets({ scenarios: [], revocation: null, sensorScripts: null, variants }).find((target) => target.id === 'P19')!;

t.test('P19: CPU time an answer off / on at 0.97 or above passes, below misses, with req/s, both p99s and the spans', async (t) => {
  // the req/s of the runs are noise around the CPU's verdict: they are shown, not judged
  const passed = p19([tracingCase(1000, 930, 120, undefined, { off: 0.975, on: 1 })]);
  t.equal(passed.verdict, 'pass');
  t.equal(passed.value, 0.975);
  t.match(
    passed.figure,
    /^0\.975x by CPU time an answer \(on 1\.000 vs off 0\.975 ms\); req\/s 0\.930x \(on 930 vs off 1000\), p99 30\.\d vs 20\.\d ms$/,
  );
  t.match(passed.detail, /the sink received 120 spans in 4 exports/);
  t.match(passed.detail, /tracing off loads no OpenTelemetry module/);

  const missed = p19([tracingCase(1000, 1000, 120, undefined, { off: 0.96, on: 1 })]);
  t.equal(missed.verdict, 'miss', 'whatever the req/s');
  t.equal(missed.value, 0.96);
});

t.test('P19 is not measured without spans at the sink, without the case, or with 429s', async (t) => {
  t.match(p19([tracingCase(1000, 1000, 0)]), { verdict: 'not measured', detail: /received no span: tracing was not on/ });
  t.match(p19(null), { verdict: 'not measured', detail: /tracing variant was not run/ });
  t.match(p19([{ ...tracingCase(1000, 1000, 5), notMeasured: 'variant tracing failed: boom', clusters: null, ratio: null }]), {
    verdict: 'not measured',
    detail: /variant tracing failed: boom/,
  });
  t.match(p19([tracingCase(1000, 1000, 5, { '200': 9000, '429': 10 })]), { verdict: 'not measured', detail: /tracing on: 10 of/ });
});

t.test('the command line: tracing in every run --only leaves whole, the others on request', async (t) => {
  t.same(readRunOptions([]).variants, ['tracing']);
  t.same(readRunOptions(['--quick']).variants, ['tracing']);
  t.same(readRunOptions(['--only', 'small-page']).variants, []);
  t.same(readRunOptions(['--only', 'small-page', '--variants', 'tracing']).variants, ['tracing']);
  t.same(readRunOptions(['--variants']).variants, ['tracing', 'usage', 'pool-nice']);
  t.same(readRunOptions(['--variants', '--quick']).variants, ['tracing', 'usage', 'pool-nice'], '--variants before another option');
  t.same(readRunOptions(['--only', 'small-page', '--usage-overhead']).variants, ['usage']);
  t.same(readRunOptions(['--variants', 'pool-nice']).variants, ['tracing', 'pool-nice']);
  t.same(readRunOptions(['--scale']).variants, []);
  t.same(readRunOptions(['--only', 'small-page', '--variants', 'noise']).variants, ['noise'], 'noise only when named');
  t.throws(() => readRunOptions(['--variants', 'tracing,colour']), /--variants names tracing, usage, pool-nice, noise, not colour/);
  t.throws(() => readRunOptions(['--soak', '--variants']), /--soak is a run of its own/);
});

t.test('a judged case offers both clusters one steady rate from the lower pilot peak; its pilots flood', async (t) => {
  const context = (pilotPeak?: BuildContext['pilotPeak']): BuildContext => ({
    layout: layoutOf(kitConfig('quick').dataset),
    credentials: countingCredentials(),
    seconds: 3,
    sensorAvailable: true,
    rate: (_label, ceiling) => ceiling,
    ...(pilotPeak ? { pilotPeak } : {}),
  });
  const loads = (id: 'tracing' | 'noise' | 'pool-nice', pilotPeak?: BuildContext['pilotPeak']) =>
    variantScenario(id).build(context(pilotPeak)).flat();
  for (const id of ['tracing', 'noise'] as const) {
    const measured = loads(id, () => 1000);
    t.ok(measured.length > 0, `${id}: loads built`);
    t.ok(
      measured.every((load) => load.overallRate === 600),
      `${id}: 0.6 of the peak`,
    );
    t.ok(
      loads(id).every((load) => load.overallRate === undefined),
      `${id}: the pilot (no peak yet) floods`,
    );
    t.ok(
      loads(id, () => null).every((load) => load.overallRate === undefined),
      `${id}: no peak for a load, no rate`,
    );
  }
  const niceLoads = loads('pool-nice', () => 1000);
  t.ok(
    niceLoads.some((load) => load.overallRate !== 600),
    'pool-nice (not judged) keeps its scenario as it is',
  );

  const estimates = new Map([
    ['project', new Map([['page', 900]])],
    ['reference', new Map([['page', 700]])],
  ] as const);
  t.equal(pilotPeakOf(estimates, 'project', 'page', 'lower'), 700, 'the lower of the two, for either server');
  t.equal(pilotPeakOf(estimates, 'reference', 'page', 'lower'), 700);
  t.equal(pilotPeakOf(estimates, 'project', 'page', 'own'), 900, "a server's own otherwise");
  t.equal(pilotPeakOf(estimates, 'project', 'other', 'lower'), null, 'unknown load');
  t.equal(pilotPeakOf(new Map([['project', new Map([['page', 900]])]]), 'project', 'page', 'lower'), 900, 'one server: its own');
});

t.test("a variant's line names CPU time an answer only where its load had a phase of its own", async (t) => {
  const measured = tracingCase(1000, 990, 10);
  t.match(variantLine(measured), /tracing off 1000\.0 2xx\/s, p99 20\.0 ms, 1\.000 ms CPU an answer/);
  const shared = tracingCase(1000, 990, 10);
  shared.clusters = {
    shipped: { ...shared.clusters!.shipped, cpuMsPerAnswer: null },
    variant: { ...shared.clusters!.variant, cpuMsPerAnswer: null },
  };
  const line = variantLine(shared);
  t.notMatch(line, /CPU an answer|\?/, `no unknown figure printed: ${line}`);
  t.match(line, /tracing off 1000\.0 2xx\/s, p99 20\.0 ms;/);
});

t.test('the credential plan counts every fresh pair a judged case runs on', async (t) => {
  t.equal(variantScenarios(['tracing']).length, 6, 'tracing is judged on six pairs, each cluster in each slot three times');
  t.equal(variantScenarios(['pool-nice']).length, 1, 'an informative case runs on one pair');
  const config = kitConfig('full');
  const alone = planCredentials(config, [variantScenario('tracing')], []);
  const planned = planCredentials(config, variantScenarios(['tracing']), variantWarmups(['tracing']));
  t.ok(planned.alpha >= 6 * (alone.alpha - 20), `tokens for six pairs: ${planned.alpha} against ${alone.alpha} for one`);
});
