// P5's statistics (bench/kit/loop-delay.ts): windows merge by adding their buckets, and the p99 is
// read once from the sum, never as the mean or the worst of the windows' p99s.
import t from 'tap';
import { type LoopDelay, mergeLoops, quantileMs } from '../../bench/kit/loop-delay.js';

const boundsMs = [1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100, 250, 500, 1000, 2500];
/** a window of `samples` samples under 1 ms, `late` of them 20-25 ms late instead */
function window(samples: number, late: number): LoopDelay {
  const counts = boundsMs.map(() => 0).concat(0);
  counts[0] = samples - late;
  counts[boundsMs.indexOf(25)] = late;
  const merged = mergeLoops([
    { p99Ms: 0, over20Share: 0, maxMs: late ? 24 : 0.5, worstWindowP99Ms: 0, windows: 1, histogram: { boundsMs, counts }, source: 'test' },
  ])!;
  return { ...merged, worstWindowP99Ms: merged.p99Ms };
}

t.test('the p99 is read within its bucket, as histogram_quantile does', async (t) => {
  t.equal(quantileMs({ boundsMs: [10, 20], counts: [50, 50, 0] }, 0.99), 19.8, 'rank 99 of 100 sits 49/50 into the 10-20 ms bucket');
  t.equal(quantileMs({ boundsMs: [10, 20], counts: [0, 0, 10] }, 0.99), 20, 'past the highest bound, the bound is all that is known');
  t.equal(quantileMs({ boundsMs: [10, 20], counts: [0, 0, 0] }, 0.99), 0, 'no sample: 0');
});

t.test('windows merge into one distribution', async (t) => {
  const quiet = window(500, 0);
  const spiky = window(500, 10);
  t.ok(spiky.p99Ms > 20, `one window with 2 % late samples has its p99 over 20 ms (${spiky.p99Ms})`);
  const merged = mergeLoops([quiet, quiet, quiet, spiky])!;
  t.ok(merged.p99Ms < 20, `merged with three quiet windows, 0.5 % are late: p99 ${merged.p99Ms.toFixed(2)} ms`);
  t.equal(merged.over20Share, 10 / 2000, 'the share over 20 ms is exact (a bucket bound)');
  t.equal(merged.worstWindowP99Ms, spiky.p99Ms, 'the worst single window is kept beside it');
  t.equal(merged.windows, 4);
  t.equal(merged.maxMs, 24);
  t.same(merged.histogram.counts.slice(0, 7), [1990, 0, 0, 0, 0, 0, 10], 'the buckets are the sums');
  t.equal(mergeLoops([]), null, 'nothing to merge: null');
});
