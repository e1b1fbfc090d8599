// The P9 scale curve's plan and the shape of its figures, shared by the run (bench/scale.ts) and
// each profile's child process (bench/scale-profile.ts, where the four latencies and the live ingest
// batch are measured): the sizes, the reproducible fleet behind each, and the command line of `--scale`.
//   npm run bench -- --scale [--scale-max 1M|10M|100M] [--profile postgres|timescale|both]
import { parseArgs } from 'node:util';
import { SENSOR_PROFILES, type SensorProfile } from './sensor-profiles.js';

/**
 * Every size is a fleet of units with the same two years of 15-minute temperature and humidity
 * readings (731 days x 192 = 140,352 a unit), ending at END; the fleet grows by units. Each size
 * is built in a database of its own, every unit at one instant then the next (as a fleet in
 * service writes them), so one unit's readings lie among as many others as they would in service.
 */
export const END = new Date('2026-01-01T00:00:00Z');
export const DAYS = 731;
export const READINGS_PER_UNIT = DAYS * 192;
export const SCALE_STEPS = [
  { label: '1M', units: 7 },
  { label: '10M', units: 71 },
  { label: '100M', units: 713 },
] as const;
export type StepLabel = (typeof SCALE_STEPS)[number]['label'];
export const isStepLabel = (value: unknown): value is StepLabel => SCALE_STEPS.some((step) => step.label === value);

/** P9, the largest size against 1M: each latency at most 1.5x, the live ingest rate at least 0.8x. */
export const P9_LATENCY_LIMIT = 1.5;
export const P9_INGEST_FLOOR = 0.8;

/** What is timed on the probe unit at every size (the requests: scale-profile.ts). */
export const LATENCIES = [
  { key: 'hourlyYear', title: 'hourly year' },
  { key: 'dailyYear', title: 'daily year' },
  { key: 'page500', title: 'raw page 500' },
  { key: 'newestDay', title: 'newest-day raw page' },
] as const;
export type LatencyKey = (typeof LATENCIES)[number]['key'];

export interface Bytes {
  /** the readings: every partition or chunk (compressed ones too), indexes and TOAST included */
  readings: number;
  /** both aggregates' relations (rollup tables, or materialized hypertables), indexes included */
  aggregates: number;
  /** pg_database_size: all of the above plus the catalog and everything else of the database */
  database: number;
}

export interface IngestFigures {
  readingsPerRound: number;
  perSecond: number[];
  median: number;
}

export interface StepFigures {
  label: StepLabel;
  units: number;
  readings: number;
  /** the fleet's two years through the real ingest, in time order */
  load: { seconds: number; perSecond: number; lastTenthPerSecond: number };
  upkeep: { seconds: number; steps: string[] };
  /** partitions or chunks, and how many the upkeep compacted or compressed */
  layout: string;
  /** as loaded, and after the upkeep (timescale: compressed) */
  bytesLoaded: Bytes;
  bytes: Bytes;
  /** medians over the measured rounds, ms; rounds keeps every figure */
  latencyMs: Record<LatencyKey, number>;
  rounds: Record<LatencyKey, number[]>;
  /** readings/s of each live batch round, and their median */
  ingest: IngestFigures;
  /**
   * The 1M store (kept from the first step, with the live batches of the steps before) measured
   * beside this size, request for request and batch for batch in alternation: the P9 ratios are
   * taken from this pair, so the machine's noise hits both sides. Null on the 1M step itself.
   */
  beside: { readings: number; latencyMs: Record<LatencyKey, number>; rounds: Record<LatencyKey, number[]>; ingest: IngestFigures } | null;
  /**
   * highest pg_database_size sampled while this size existed (with the 1M store beside it), and the file system's
   * growth under the server's data directory
   */
  peakDatabaseBytes: number;
  peakFileSystemGrowthBytes: number | null;
  wallSeconds: number;
  /** the machine's 1-minute load average when the size began and ended (2 cores: above ~1.5, others were busy too) */
  loadAverage: { start: number; end: number };
}

/** What a profile's child process prints last on stdout (one JSON line). */
export interface ProfileCurve {
  profile: SensorProfile;
  /** the profile, server and versions */
  note: string;
  steps: StepFigures[];
  wallSeconds: number;
  /** set when the curve stopped short (a step failed) */
  error: string | null;
}

export interface ScaleOptions {
  max: StepLabel;
  profiles: SensorProfile[];
}

/** The steps up to and including `max`. */
export const stepsUpTo = (max: StepLabel) => SCALE_STEPS.slice(0, SCALE_STEPS.findIndex((step) => step.label === max) + 1);

/** --scale-max and --profile of a `--scale` run (both optional); throws with a one-line reason. */
export function readScaleOptions(args: string[]): ScaleOptions {
  const { values } = parseArgs({ args, strict: false, options: { 'scale-max': { type: 'string' }, profile: { type: 'string' } } });
  const max = (values['scale-max'] as string | undefined) ?? '100M';
  if (!isStepLabel(max)) throw new Error(`--scale-max must be ${SCALE_STEPS.map((step) => step.label).join(', ')}, not "${max}"`);
  const profile = (values.profile as string | undefined) ?? 'both';
  if (profile !== 'both' && !SENSOR_PROFILES.includes(profile as SensorProfile)) {
    throw new Error(`--profile must be postgres, timescale or both, not "${profile}"`);
  }
  return { max, profiles: profile === 'both' ? [...SENSOR_PROFILES] : [profile as SensorProfile] };
}
