// The event-loop delay histogram (src/observability/event-loop-delay.ts): a loop held busy shows
// as a late sample in the bucket of its length, an idle loop's samples stay near 0, and stop()
// ends the sampling.
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import t from 'tap';
import { type EventLoopDelaySampler, LOOP_DELAY_BUCKETS, sampleEventLoopDelay } from '../../src/observability/event-loop-delay.js';

async function buckets(sampler: EventLoopDelaySampler) {
  const counts = await sampler.buckets();
  const bucket = (le: number | string) => counts.find((b) => b.le === le)!.count;
  return { bucket, count: bucket('+Inf') };
}

t.test('a busy loop is counted late, by how late', async (t) => {
  const sampler = sampleEventLoopDelay(new Registry());
  t.teardown(() => sampler.stop());
  await sleep(200);
  const idle = await buckets(sampler);
  t.ok(idle.count >= 5, `an idle loop was sampled (${idle.count} samples in 200 ms)`);
  // on a shared machine (the suite's other files) a sample may be late; most of an idle loop's are not
  t.ok(idle.bucket(0.01) >= idle.count * 0.5, `an idle loop's samples are under 10 ms late (${idle.bucket(0.01)} of ${idle.count})`);

  const busyUntil = performance.now() + 120;
  while (performance.now() < busyUntil);
  await sleep(30);
  const after = await buckets(sampler);
  t.ok(after.bucket('+Inf') - after.bucket(0.1) >= 1, 'the 120 ms the loop was held is a sample over 100 ms');
  t.ok(after.count - idle.count <= 10, `held, the loop took no samples: ${after.count - idle.count} in the 150 ms`);
  t.ok(LOOP_DELAY_BUCKETS.includes(0.02), 'a bucket bound sits at 20 ms, the line bench/ holds the p99 under');

  sampler.stop();
  const stopped = (await buckets(sampler)).count;
  await sleep(100);
  t.equal((await buckets(sampler)).count, stopped, 'no sample after stop()');
});
