// P16 (bench/kit/targets.ts): the conditional-page scenario's alternating phases, the same sensor
// page plain (200) and with If-None-Match naming its ETag (304), judged by the 200's req/s over the
// 304's, pair by pair, with the workers' CPU time per answer beside it; a 304 that did not come,
// or a 429, is no figure to judge.
import t from 'tap';
import type { LoadFigures } from '../../bench/kit/load.js';
import { type ScenarioResult, type ServerRun, summarize } from '../../bench/kit/results.js';
import { CONDITIONAL_LOADS } from '../../bench/kit/scenarios.js';
import { evaluateTargets } from '../../bench/kit/targets.js';
import { latencyHistogram } from './run-fixtures.js';

const figures = (reqPerS: number, status: string): LoadFigures => ({
  durationS: 4,
  latencyHistogram: latencyHistogram(10, 25),
  responses: reqPerS * 4,
  reqPerS,
  okPerS: status === '200' ? reqPerS : 0,
  peakPerS: reqPerS,
  latencyMs: { mean: 10, p50: 10, p97_5: 20, p99: 25, max: 40 },
  errors: 0,
  timeouts: 0,
  non2xx: status === '200' ? 0 : reqPerS * 4,
  statusCodes: { [status]: reqPerS * 4 },
  mbPerS: 1,
});

/** Phases 200, 304, 304, 200 at these rates, the workers using `cpuMs` of CPU in each. */
function scenario(plain: [number, number], revalidated: [number, number], status304 = '304', cpuMs = 4000): ScenarioResult {
  const phases: [string, number, string][] = [
    [CONDITIONAL_LOADS.plain, plain[0], '200'],
    [CONDITIONAL_LOADS.revalidated, revalidated[0], status304],
    [CONDITIONAL_LOADS.revalidated, revalidated[1], status304],
    [CONDITIONAL_LOADS.plain, plain[1], '200'],
  ];
  const runs: ServerRun[] = [
    {
      server: 'project',
      position: 0,
      loads: phases.map(([label, rate, status], phase) => ({
        phase,
        label,
        connections: 8,
        overallRate: null,
        requestsInList: 2,
        figures: figures(rate, status),
        phaseWorkerCpuMs: cpuMs,
      })),
      memory: [],
      loop: null,
    },
  ];
  return {
    id: 'conditional-page',
    status: 'measured',
    reason: null,
    runs,
    summary: { project: summarize(runs, 'project') },
  };
}

const p16 = (result: ScenarioResult) =>
  evaluateTargets({ scenarios: [result], revocation: null, sensorScripts: null }).find((target) => target.id === 'P16')!;

t.test('the 200 over the 304: a pass at 0.5x or less, with the pairs and the CPU per answer', async (t) => {
  const passed = p16(scenario([400, 440], [1000, 1000]));
  t.equal(passed.verdict, 'pass');
  t.equal(passed.value, 0.42, "the 200's mean req/s over the 304's");
  t.match(passed.figure, /^0\.42x \(304 1000 req\/s vs 200 420 req\/s; 2 alternating pairs, mean 0\.42x, 95 % CI/);
  // 4,000 ms of CPU in each 4 s phase: 1 ms an answer at 1,000 req/s, 2.38 ms at the 200s' 420
  t.match(passed.detail, /workers' CPU per answer: 304 1\.000 ms, 200 2\.381 ms \(0\.42x\)/);

  const missed = p16(scenario([600, 600], [1000, 1000]));
  t.equal(missed.verdict, 'miss');
  t.equal(missed.value, 0.6);
});

t.test('no figure: conditional requests that were not 304, or 429, or a scenario not run', async (t) => {
  const not304 = p16(scenario([400, 400], [1000, 1000], '200'));
  t.equal(not304.verdict, 'miss');
  t.match(not304.figure, /^0 of 8000 conditional requests were 304/);
  const limited = p16(scenario([400, 400], [1000, 1000], '429'));
  t.equal(limited.verdict, 'not measured');
  t.match(limited.detail, /8000 of 8000 conditional requests were 429/);
  const absent = evaluateTargets({ scenarios: [], revocation: null, sensorScripts: null }).find((target) => target.id === 'P16')!;
  t.equal(absent.verdict, 'not measured');
  t.match(absent.detail, /conditional-page was not run/);
});
