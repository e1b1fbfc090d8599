// Latency over several runs: their HdrHistograms (microseconds, from load.ts) merged, the
// percentiles read from the sum, since percentiles do not average.
import * as hdr from 'hdr-histogram-js';

export interface LatencyMs {
  mean: number;
  p50: number;
  p97_5: number;
  p99: number;
  max: number;
}

/** The runs' histograms: microseconds, 1 µs to an hour, 3 significant digits (0.1 %). */
export const LATENCY_US = {
  lowestDiscernibleValue: 1,
  highestTrackableValue: 3_600_000_000,
  numberOfSignificantValueDigits: 3,
  autoResize: true,
} as const;

const ms = (us: number) => us / 1000;

/** The latency of runs' answers together, in ms; null when a run has no histogram (a record from before they were kept). */
export function latencyOf(encoded: (string | null)[]): LatencyMs | null {
  if (encoded.length === 0 || encoded.some((histogram) => !histogram)) return null;
  const sum = hdr.build(LATENCY_US);
  for (const histogram of encoded) {
    const run = hdr.decodeFromCompressedBase64(histogram!);
    sum.add(run);
    run.destroy();
  }
  const latency =
    sum.totalCount === 0
      ? { mean: 0, p50: 0, p97_5: 0, p99: 0, max: 0 }
      : {
          mean: ms(sum.mean),
          p50: ms(sum.getValueAtPercentile(50)),
          p97_5: ms(sum.getValueAtPercentile(97.5)),
          p99: ms(sum.getValueAtPercentile(99)),
          max: ms(sum.maxValue),
        };
  sum.destroy();
  return latency;
}
