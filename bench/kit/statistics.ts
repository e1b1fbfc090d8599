// The kit's arithmetic: a timed call, a median, a figure's digits; and a ratio over alternating pairs
// of phases (P3's deep-walk, P16) with the 95 % confidence interval of its mean, to tell a miss from noise.
import type { ServerRun } from './results.js';

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; result: T }> {
  const started = performance.now();
  const result = await fn();
  return { ms: performance.now() - started, result };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const fixed = (value: number, digits = 1) => value.toFixed(digits);
/** A latency in ms as the reports print it: whole from 100 ms, else to a tenth. */
export const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
export const gigabytes = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GB`;

/** Student's t, two-sided 95 %, by degrees of freedom (1..30; beyond, the normal's 1.96 is close enough). */
const T_95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086,
  2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

export interface PairedRatio {
  /** every pair's ratio, in the order they ran */
  ratios: number[];
  mean: number;
  /** 95 % confidence interval of the mean; null with fewer than two pairs */
  interval: [number, number] | null;
}

export function meanWithInterval(ratios: number[]): PairedRatio {
  const mean = ratios.reduce((sum, r) => sum + r, 0) / ratios.length;
  if (ratios.length < 2) return { ratios, mean, interval: null };
  const variance = ratios.reduce((sum, r) => sum + (r - mean) ** 2, 0) / (ratios.length - 1);
  const half = (T_95[ratios.length - 2] ?? 1.96) * Math.sqrt(variance / ratios.length);
  return { ratios, mean, interval: [mean - half, mean + half] };
}

type PhaseLoad = ServerRun['loads'][number];

/**
 * The ratio of `figure` of `numerator` to that of `denominator` in each pair of adjacent phases of
 * a server's runs (phases 0-1, 2-3, ...: the scenario alternates the two loads), or null when no
 * pair ran.
 */
export function pairedRatio(
  runs: ServerRun[],
  server: string,
  numerator: string,
  denominator: string,
  figure: (load: PhaseLoad) => number,
): PairedRatio | null {
  const ratios: number[] = [];
  for (const run of runs.filter((r) => r.server === server)) {
    const byPhase = new Map(run.loads.map((load) => [load.phase, load]));
    for (let phase = 0; byPhase.has(phase + 1); phase += 2) {
      const pair = [byPhase.get(phase)!, byPhase.get(phase + 1)!];
      const top = pair.find((load) => load.label === numerator);
      const bottom = pair.find((load) => load.label === denominator);
      if (top && bottom && figure(bottom)) ratios.push(figure(top) / figure(bottom));
    }
  }
  return ratios.length === 0 ? null : meanWithInterval(ratios);
}

/** The p50 latency ratio `numerator` / `denominator` of each pair of adjacent phases (P3). */
export const pairedP50Ratio = (runs: ServerRun[], server: string, numerator: string, denominator: string) =>
  pairedRatio(runs, server, numerator, denominator, (load) => load.figures.latencyMs.p50);
