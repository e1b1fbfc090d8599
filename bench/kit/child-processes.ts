// Every child process the kit starts (clusters, load generators, npm, sensor scripts) is tracked
// here, so an error or Ctrl-C still stops it: SIGINT to its process group, then SIGKILL.
import type { ChildProcess } from 'node:child_process';
import { within } from './timing.js';

const running = new Set<ChildProcess>();
let stopping = false;

/** Clean-up has begun: nothing new may start (a late spawn is interrupted at once). */
export const isStopping = () => stopping;
export const beginStopping = () => {
  stopping = true;
};

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

/**
 * Clean-up: SIGINT to every process group still running (the sensor scripts drop their databases
 * on it; the clusters and generators stop), then SIGKILL what is left after `graceMs`.
 */
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
