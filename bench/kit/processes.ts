// The kit's processes: every child is tracked, so an error or Ctrl-C still stops its process group
// (SIGINT, then SIGKILL); the clean-up steps run once, last added first, at the end, on an error or
// on SIGINT/SIGTERM (a second Ctrl-C kills every child at once).
import { type ChildProcess, spawn } from 'node:child_process';
import { repoRoot } from './checkout.js';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `promise`, or undefined after `ms` (the timer is cleared either way: nothing keeps the process up). */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const running = new Set<ChildProcess>();
let stopping = false;

/** Clean-up has begun: nothing new may start (a late spawn is interrupted at once). */
export const isStopping = () => stopping;

/** Last resort (process 'exit', a second Ctrl-C): SIGKILL every process group we started. */
export function killAllNow() {
  for (const child of running) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

/** SIGINT to every process group still running (the sensor scripts drop their databases on it), SIGKILL after `graceMs`. */
export async function stopAll(graceMs = 10_000) {
  stopping = true;
  const children = [...running];
  const exits = children.map(
    (child) =>
      new Promise<void>((resolve) =>
        child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
      ),
  );
  for (const child of children) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGINT');
    } catch {
      // already gone
    }
  }
  await within(Promise.all(exits), graceMs);
  killAllNow();
}

export function track(child: ChildProcess) {
  if (stopping && child.pid) {
    try {
      process.kill(-child.pid, 'SIGINT');
    } catch {
      // gone
    }
  }
  running.add(child);
  child.once('exit', () => running.delete(child));
}

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
  stopping = true;
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

export interface ChildOutcome {
  stdout: string;
  /** its last 4,000 characters (none when inherited) */
  stderr: string;
  /** what ended it: null for exit code 0, else the code, the signal or the error to start it */
  failure: string | null;
  timedOut: boolean;
}

/**
 * A tracked child in its own process group, from the repository's root, run to its end: `input` on
 * its stdin; past `timeoutMs`, SIGINT (the bench scripts drop their databases on it), then SIGKILL.
 */
export function runChild(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; inheritStderr?: boolean; timeoutMs?: number } = {},
): Promise<ChildOutcome> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', options.inheritStderr ? 'inherit' : 'pipe'],
      detached: true,
    });
    track(child);
    let [stdout, stderr, timedOut] = ['', '', false];
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, name);
      } catch {
        // gone
      }
    };
    let killer: NodeJS.Timeout | undefined;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            signal('SIGINT');
            killer = setTimeout(() => signal('SIGKILL'), 15_000);
          }, options.timeoutMs);
    let ended = false;
    const end = (failure: string | null) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      clearTimeout(killer);
      resolve({ stdout, stderr, failure, timedOut });
    };
    child.on('error', (error) => end(error.message));
    child.on('exit', (code, exitSignal) => {
      const failure = code === 0 ? null : `${exitSignal ?? code}`;
      // its output is whole on 'close'; a grandchild holding the pipes open delays that 2 s at most
      const grace = setTimeout(() => end(failure), 2000);
      child.once('close', () => {
        clearTimeout(grace);
        end(failure);
      });
    });
    child.stdin?.end(options.input);
  });
}
