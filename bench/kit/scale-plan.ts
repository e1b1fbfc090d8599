// The P9 scale curve's sizes, target and command line, shared by bench/scale.ts and bench/scale-profile.ts.
import { parseArgs } from 'node:util';
import { SENSOR_PROFILES, type SensorProfile } from './sensor-profiles.js';

/**
 * Every size is a fleet of units with the same two years of 15-minute readings ending at END; the
 * fleet grows by units, written one instant at a time, so a unit's readings lie among as many
 * others as they would in service.
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

export const LATENCIES = [
  { key: 'hourlyYear', title: 'hourly year' },
  { key: 'dailyYear', title: 'daily year' },
  { key: 'page500', title: 'raw page 500' },
  { key: 'newestDay', title: 'newest-day raw page' },
] as const;
export type LatencyKey = (typeof LATENCIES)[number]['key'];

/** readings: partitions or chunks with indexes; aggregates: both, with indexes; database: pg_database_size */
export interface Bytes {
  readings: number;
  aggregates: number;
  database: number;
}

export interface ScaleOptions {
  max: StepLabel;
  profiles: SensorProfile[];
}

export const stepsUpTo = (max: StepLabel) => SCALE_STEPS.slice(0, SCALE_STEPS.findIndex((step) => step.label === max) + 1);

/** --scale-max and --profile (both optional); throws with a one-line reason. */
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
