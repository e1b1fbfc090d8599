// Event-loop delay as a Prometheus histogram. prom-client's default metrics expose Node's
// monitorEventLoopDelay as percentile gauges (nodejs_eventloop_lag_p99_seconds), which cannot be
// combined: the cluster primary averages the workers' p99s, and no query can turn a series of
// p99s into the p99 of an hour. A histogram's buckets add up across workers, instances and time,
// so histogram_quantile() over their sum is the true percentile of the whole (and bench/ reads
// P5 so). Sampled the way monitorEventLoopDelay samples: a timer every 10 ms, each observation
// how much later than due it ran (the interval itself is not counted, unlike the gauges above).
import { Histogram, type Registry } from 'prom-client';

export const LOOP_SAMPLE_INTERVAL_MS = 10;

/** Bucket bounds, in seconds: fine around the 20 ms that bench/ P5 holds the p99 under. */
export const LOOP_DELAY_BUCKETS = [0.001, 0.002, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5];

/** Samples at or under a bound ('+Inf': every sample), as the histogram counts them: cumulative, in bound order. */
export interface LoopDelayBucket {
  le: number | '+Inf';
  count: number;
}

export interface EventLoopDelaySampler {
  histogram: Histogram;
  /** the histogram's buckets as they stand (bench/reference/ serves them; its registry is not scraped) */
  buckets(): Promise<LoopDelayBucket[]>;
  stop(): void;
}

export function sampleEventLoopDelay(registry: Registry): EventLoopDelaySampler {
  const histogram = new Histogram({
    name: 'event_loop_delay_seconds',
    help: `How late the event loop ran a timer due every ${LOOP_SAMPLE_INTERVAL_MS} ms (one observation each time it ran): a histogram, so it sums across workers and instances`,
    buckets: LOOP_DELAY_BUCKETS,
    registers: [registry],
  });
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    histogram.observe(Math.max(0, now - last - LOOP_SAMPLE_INTERVAL_MS) / 1000);
    last = now;
  }, LOOP_SAMPLE_INTERVAL_MS);
  // a sampler never keeps a process alive
  timer.unref();
  return {
    histogram,
    async buckets() {
      const { values } = await histogram.get();
      return values
        .filter((value) => value.metricName?.endsWith('_bucket'))
        .map((value) => ({ le: value.labels.le as number | '+Inf', count: value.value }));
    },
    stop: () => clearInterval(timer),
  };
}
