// The P14 verdict (bench/kit/soak-verdict.ts) on made-up series: a steady soak passes; a worker
// whose memory climbs, a last window slower than the first, file descriptors or connections that
// pile up, or a single 5xx each miss their check; the windows scale with the soak's length. And the
// command line: `--soak` alone is the 30-minute soak, a shorter or faster one is partial (never
// published), bad values are refused.
import t from 'tap';
import { readRunOptions } from '../../bench/kit/run-options.js';
import { judgeSoak, P14, slope, type SoakInterval, soakRecordOf } from '../../bench/kit/soak-verdict.js';
import { soakFiguresMarkdown } from '../../bench/kit/figures-markdown.js';

/** `minutes` of 10-second intervals, each figure a function of the interval's end in seconds. */
function series(minutes: number, shape: Partial<Record<'rss' | 'p99' | 'fds' | 'pg' | 'redis' | 'errors', (atS: number) => number>> = {}) {
  return Array.from({ length: Math.round((minutes * 60) / 10) }, (_, i): SoakInterval => {
    const atS = (i + 1) * 10;
    return {
      startS: i * 10,
      atS,
      requests: 200,
      p50Ms: 20,
      p99Ms: shape.p99?.(atS) ?? 80 + (i % 3),
      status5xx: shape.errors?.(atS) ?? 0,
      failures: 0,
      otherNon2xx: 0,
      sample: {
        workers: [
          { pid: 101, rssMb: shape.rss?.(atS) ?? 150 + (i % 2), fds: shape.fds?.(atS) ?? 38 + (i % 4) },
          { pid: 102, rssMb: 149 + (i % 3), fds: 37 },
        ],
        lagP99Ms: 12,
        postgresConnections: shape.pg?.(atS) ?? 20 + (i % 3),
        redisConnections: shape.redis?.(atS) ?? 4,
      },
    };
  });
}

const check = (intervals: SoakInterval[], id: string, minutes = 30) => judgeSoak(intervals, minutes).checks.find((c) => c.id === id)!;

t.test('least-squares slope', async (t) => {
  t.equal(
    slope([
      [0, 1],
      [1, 3],
      [2, 5],
    ]),
    2,
  );
  t.equal(slope([[1, 1]]), null);
  t.equal(
    slope([
      [1, 1],
      [1, 2],
    ]),
    null,
    'no spread in x: no slope',
  );
});

t.test('a steady 30-minute soak passes every check', async (t) => {
  const verdict = judgeSoak(series(30), 30);
  t.equal(verdict.windowMinutes, 5);
  t.same(
    verdict.checks.map((c) => [c.id, c.pass]),
    ['memory', 'latency', 'fds', 'postgres', 'redis', 'errors'].map((id) => [id, true]),
  );
  t.ok(verdict.pass);
});

t.test('memory: judged after the first window, per worker', async (t) => {
  // 0.6 MB a minute = 6 MB per 10 minutes on worker 101
  const leaking = check(series(30, { rss: (s) => 150 + (s / 60) * 0.6 }), 'memory');
  t.notOk(leaking.pass);
  t.ok(Math.abs(leaking.value! - 6) < 0.01, `slope ${leaking.value}`);
  t.ok(check(series(30, { rss: (s) => 150 + (s / 60) * 0.4 }), 'memory').pass, '4 MB per 10 minutes is within');
  // the first five minutes' growth (start-up, caches) is not held against it
  t.ok(check(series(30, { rss: (s) => (s <= 300 ? 100 + s / 6 : 150) }), 'memory').pass);
});

t.test('latency: the last window against the first, by the median of their intervals', async (t) => {
  const slower = check(series(30, { p99: (s) => (s > 1500 ? 100 : 80) }), 'latency');
  t.notOk(slower.pass);
  t.equal(slower.value, 100 / 80);
  t.ok(check(series(30, { p99: (s) => (s === 1790 ? 900 : 80) }), 'latency').pass, 'one slow interval does not decide it');
});

t.test('flat: fds per worker, PostgreSQL and Redis connections', async (t) => {
  t.notOk(check(series(30, { fds: (s) => 38 + Math.floor(s / 60) }), 'fds').pass, 'a descriptor a minute');
  t.notOk(check(series(30, { pg: (s) => (s > 1500 ? 20 + 2 + P14.tolerance.postgresConnections + 1 : 20) }), 'postgres').pass);
  t.notOk(check(series(30, { redis: (s) => (s > 1500 ? 5 : 4) }), 'redis').pass, 'one Redis connection more');
});

t.test('errors: a single 5xx misses', async (t) => {
  const verdict = judgeSoak(series(30, { errors: (s) => (s === 600 ? 1 : 0) }), 30);
  t.notOk(verdict.checks.find((c) => c.id === 'errors')!.pass);
  t.notOk(verdict.pass);
});

t.test('a short soak scales its windows down, never below one interval', async (t) => {
  t.equal(judgeSoak(series(6), 6).windowMinutes, 1);
  t.equal(judgeSoak(series(0.5), 0.5).windowMinutes, 10 / 60);
  const short = judgeSoak(series(0.5), 0.5);
  t.ok(short.checks.find((c) => c.id === 'latency')!.value !== null, 'both windows hold an interval');
});

t.test('the record and the doc section of a soak', async (t) => {
  const intervals = series(2);
  const run = {
    options: { minutes: 2, rate: 20, profile: 'postgres' as const },
    startedAt: new Date('2026-11-27T15:00:00.000Z'),
    finishedAt: new Date('2026-11-27T15:03:20.000Z'),
    machine: {
      cpuModel: 'test cpu',
      cores: 2,
      memoryGb: 8,
      node: 'v24.0.0',
      postgres: null,
      redis: '7.0.15',
      loadAverage: { start: 1, end: 1 },
    },
    intervals,
    failures: [],
  };
  const record = soakRecordOf(run, ['--soak 2'], { hash: 'a'.repeat(40), dirty: false, movedTo: null });
  t.equal(record.kind, 'soak');
  t.equal(record.series.length, 12);
  t.same(record.series[0]!.rssMb.length, 2);
  t.equal(record.targets[0]!.verdict, 'pass');
  const markdown = soakFiguresMarkdown(record);
  t.match(markdown, /--soak 2/);
  t.match(markdown, /\| memory \| PASS \|/);
  t.match(markdown, /Partial run \(--soak 2\)/);
});

t.test('the command line', async (t) => {
  const soakOf = (args: string[]) => readRunOptions(args);
  t.same(soakOf(['--soak']).soak, { minutes: 30, rate: 20, profile: 'postgres' });
  t.same(soakOf(['--soak']).partial, []);
  t.same(soakOf(['--soak', '--publish']).soak?.minutes, 30, '--soak before another option');
  t.same(soakOf(['--soak', '2', '--profile', 'timescale']).soak, { minutes: 2, rate: 20, profile: 'timescale' });
  t.same(soakOf(['--soak', '0.5', '--soak-rate', '5']).partial, ['--soak 0.5', '--soak-rate 5']);
  t.throws(() => soakOf(['--soak', '2', '--publish']), /--publish takes a complete soak/);
  t.throws(() => soakOf(['--soak', 'ten']), /--soak takes minutes/);
  t.throws(() => soakOf(['--soak', '-3']), /--soak takes minutes|ambiguous/i);
  t.throws(() => soakOf(['--soak', '5', '--quick']), /--soak is a run of its own/);
  t.throws(() => soakOf(['--soak', '5', '--profile', 'mysql']), /postgres or timescale/);
  t.throws(() => soakOf(['--soak-rate', '5']), /--soak-rate belongs to --soak/);
  t.equal(readRunOptions([]).soak, null);
});
