// A test file that dies before its teardowns run (an uncaught error at top level, tap's timeout)
// must not leave the servers it spawned running: a leaked cluster or redis-server keeps its port
// and its CPU share for the rest of the suite and beyond (two of each outlived a failed run). Every
// child registered here is SIGKILLed, with its own children (a cluster's workers), when this
// process exits for any reason, whether or not the test's teardown already stopped it.
import { type ChildProcess, execFileSync } from 'node:child_process';

const children = new Set<ChildProcess>();

function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => Number(line.trim()))
      .filter((child) => child > 0);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

function killQuietly(pid: number) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

process.once('exit', () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null || !child.pid) continue;
    // the children first: a cluster primary killed first leaves its workers to init, out of reach
    const grandchildren = childrenOf(child.pid);
    killQuietly(child.pid);
    grandchildren.forEach(killQuietly);
  }
});

/** Kill `child` (and its children) when this test process exits, if it is still running then. */
export function reapOnExit(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
