// The run's clean-up: steps registered as things start, run once in reverse order (stop the
// clusters before dropping their database) at the end, on an error, or on SIGINT/SIGTERM; a
// second Ctrl-C kills every child at once.
import { beginStopping, killAllNow } from './child-processes.js';

type Step = () => Promise<void>;

const steps: Step[] = [];
let cleaning: Promise<void> | null = null;
let interrupted = false;

export const onCleanUp = (step: Step) => {
  steps.push(step);
};

/** Ctrl-C or SIGTERM arrived: the run stops at its next step and reports nothing. */
export const wasInterrupted = () => interrupted;

export function cleanUp(log: (line: string) => void): Promise<void> {
  beginStopping();
  cleaning ??= (async () => {
    for (const step of steps.reverse()) await step().catch((error: unknown) => log(`clean-up: ${String(error)}`));
  })();
  return cleaning;
}

/** `stopping`: what the clean-up will do, said on the first Ctrl-C. */
export function handleInterrupts(log: (line: string) => void, stopping = 'stopping every process and dropping the database') {
  process.on('SIGINT', () => {
    if (interrupted) {
      killAllNow();
      process.exit(130);
    }
    interrupted = true;
    log(`interrupted: ${stopping} (Ctrl-C again to kill at once)`);
    void cleanUp(log).finally(() => process.exit(130));
  });
  // a supervisor's or CI timeout's stop: the same clean-up as a first Ctrl-C, said as such
  process.on('SIGTERM', () => {
    if (interrupted) return;
    interrupted = true;
    log(`SIGTERM: ${stopping}`);
    void cleanUp(log).finally(() => process.exit(143));
  });
  // last resort: no process group outlives the run
  process.on('exit', killAllNow);
}
