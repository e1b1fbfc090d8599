// P3's alternating pairs (bench/kit/statistics.ts): each adjacent pair of phases gives one
// page-500/page-1 ratio, whichever went first, and their mean comes with a 95 % confidence
// interval that is wide for scattered pairs and narrow for consistent ones.
import t from 'tap';
import type { LoadFigures } from '../../bench/kit/load.js';
import { meanWithInterval, pairedP50Ratio } from '../../bench/kit/statistics.js';
import type { ServerRun } from '../../bench/kit/results.js';

const load = (phase: number, label: string, p50: number) => ({
  phase,
  label,
  connections: 4,
  overallRate: null,
  requestsInList: 2,
  figures: { latencyMs: { mean: p50, p50, p97_5: p50, p99: p50, max: p50 } } as LoadFigures,
});
const run = (server: 'project' | 'reference', loads: ReturnType<typeof load>[]): ServerRun => ({
  server,
  position: 0,
  loads,
  memory: [],
  loop: null,
});

t.test('the interval: Student t over the pairs', async (t) => {
  const exact = meanWithInterval([1.1, 1.1, 1.1]);
  t.same(exact.interval, [1.1, 1.1], 'identical pairs: no spread');
  const scattered = meanWithInterval([0.9, 1.3]);
  t.equal(scattered.mean, 1.1);
  // s = 0.2828, t(1) = 12.706, half = 12.706 * 0.2828 / sqrt(2) = 2.5412
  t.ok(Math.abs(scattered.interval![1] - scattered.interval![0] - 2 * 2.5412) < 1e-3, `${scattered.interval}`);
  t.equal(meanWithInterval([1.2]).interval, null, 'one pair: no interval');
});

t.test('pairs of adjacent phases, whichever page went first; other servers ignored', async (t) => {
  const runs = [
    run('project', [load(0, 'page 1', 10), load(1, 'page 500', 11), load(2, 'page 500', 12), load(3, 'page 1', 10)]),
    run('reference', [load(0, 'page 1', 5), load(1, 'page 500', 50)]),
    run('project', [load(0, 'page 1', 8), load(1, 'page 500', 8)]),
  ];
  const paired = pairedP50Ratio(runs, 'project', 'page 500', 'page 1')!;
  t.same(paired.ratios, [1.1, 1.2, 1]);
  t.ok(Math.abs(paired.mean - 1.1) < 1e-9);
  t.ok(paired.interval![0] < 1.1 && paired.interval![1] > 1.1);
  t.equal(pairedP50Ratio([run('project', [load(0, 'page 1', 10)])], 'project', 'page 500', 'page 1'), null, 'no pair ran');
});
