// Runs summed by merging their latency histograms (bench/kit/histograms.ts, results.ts): the
// percentile of the merged answers, not the mean of each run's percentile.
import t, { type Test } from 'tap';
import { latencyOf } from '../../bench/kit/histograms.js';
import { summarize } from '../../bench/kit/results.js';
import { latencyHistogram } from './run-fixtures.js';

/** HdrHistogram keeps 3 significant digits: a figure within 0.1 % of what was recorded */
const near = (t: Test, actual: number, expected: number, message?: string) =>
  t.ok(Math.abs(actual - expected) <= expected * 0.001, `${message ?? 'figure'}: ${actual} is ${expected}`);

t.test('the p99 of two runs is read from their merged histogram', async (t) => {
  // a quiet run (p99 10 ms) and one whose slowest 2 % took 100 ms: merged, 1 % of the answers took
  // 100 ms, so the p99 is 10 ms; the mean of the runs' p99s (55 ms) is the p99 of neither
  const quiet = latencyHistogram(10, 10);
  const slow = latencyHistogram(10, 100);
  near(t, latencyOf([quiet, slow])!.p99, 10);
  near(t, latencyOf([quiet, slow])!.max, 100);
  // two slow runs: 2 % at 100 ms
  near(t, latencyOf([slow, slow])!.p99, 100);
  near(t, latencyOf([slow, slow])!.p50, 10);
  t.equal(latencyOf([]), null, 'no runs: no figure');
  t.equal(latencyOf([quiet, null]), null, 'a run without a histogram: no merged figure');
});

t.test('a load summary merges its runs and keeps each run p99 beside', async (t) => {
  const load = (histogram: string, p99: number) => ({
    phase: 0,
    label: 'page',
    connections: 8,
    overallRate: null,
    requestsInList: 10,
    figures: {
      durationS: 10,
      latencyHistogram: histogram,
      responses: 1000,
      reqPerS: 100,
      okPerS: 100,
      peakPerS: 100,
      latencyMs: { mean: 10, p50: 10, p97_5: p99, p99, max: p99 },
      errors: 0,
      timeouts: 0,
      non2xx: 0,
      statusCodes: { '200': 1000 },
      mbPerS: 1,
    },
  });
  const run = (position: number, histogram: string, p99: number) => ({
    server: 'project' as const,
    position,
    loads: [load(histogram, p99)],
    memory: [],
    loop: null,
  });
  const summary = summarize([run(0, latencyHistogram(10, 10), 10), run(1, latencyHistogram(10, 100), 100)], 'project')!;
  near(t, summary.loads.page!.latencyMs.p99, 10, 'from the merged histogram');
  t.same(summary.loads.page!.runP99Ms, [10, 100], "each run's own p99, in order");
});
