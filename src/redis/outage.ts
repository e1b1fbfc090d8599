// Outages of Redis as one process sees them through its commands, for what is logged and counted:
// lost at the first failure, back only once commands have succeeded and none has failed for
// `quietMs`. A Redis Cluster failing over answers some commands (keys of the live masters) and
// fails others (the dead master's slots, then CLUSTERDOWN until a replica takes over): counted per
// command, one 5 s failover was 4-7 "unavailable"/"back" pairs per worker, and as many fallbacks.
// Requests are unaffected: each command still uses Redis when it answers and the fallback when it
// does not; only the lines and the counter follow outages instead of commands.

/** Quiet time after the last failure before Redis counts as back. */
export const REDIS_BACK_AFTER_MS = 3000;

export interface OutageEvents {
  /** the first failure of an outage */
  onLost?: (error: unknown) => void;
  /** commands have succeeded, and none has failed, for quietMs */
  onBack?: () => void;
}

export function createOutageTracker(events: OutageEvents, quietMs = REDIS_BACK_AFTER_MS) {
  let down = false;
  let lastFailure = 0;
  let timer: NodeJS.Timeout | undefined;

  const settle = () => {
    timer = undefined;
    if (!down) return;
    // a failure clears this timer, so none came since the success that set it; but a timer runs
    // on the event loop's clock, which can be a millisecond ahead of Date.now(): wait the rest
    const rest = lastFailure + quietMs - Date.now();
    if (rest > 0) {
      timer = setTimeout(settle, rest).unref();
      return;
    }
    down = false;
    events.onBack?.();
  };

  return {
    failed(error: unknown) {
      lastFailure = Date.now();
      clearTimeout(timer);
      timer = undefined;
      if (down) return;
      down = true;
      events.onLost?.(error);
    },
    succeeded() {
      if (!down || timer) return;
      timer = setTimeout(settle, Math.max(0, lastFailure + quietMs - Date.now())).unref();
    },
    /** within an outage: lost and not yet back */
    down: () => down,
  };
}
