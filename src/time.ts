// Time in one place: the injected clock (tests move it instead of sleeping) and the durations the
// code counts in, as milliseconds.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;
