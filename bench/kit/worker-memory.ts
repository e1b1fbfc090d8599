// A cluster's workers (the primary's node children in /proc) and their memory: VmRSS sampled every
// 100 ms, VmHWM (the kernel's peak) reset at each run's start, and RssFile, the file-backed part
// every worker shares but each RSS counts whole.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Direct children of a process that run node (not an esbuild service), from /proc/<pid>/stat. */
export function childPids(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parent) continue;
      const argv0 = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0];
      if (argv0 === process.execPath || argv0?.endsWith('/node') || argv0 === 'node') found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found.sort((a, b) => a - b);
}

/** VmRSS, its file-backed part (RssFile) and VmHWM (peak) of a process, in MB; null once it has exited. */
export function memoryOf(pid: number): { rssMb: number; fileMb: number; peakMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
    return { rssMb: kb('VmRSS') / 1024, fileMb: kb('RssFile') / 1024, peakMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

export interface WorkerMemory {
  pid: number;
  /** highest VmRSS seen by the sampler during the run */
  maxRssMb: number;
  /** the file-backed part (RssFile) of that highest sample */
  fileMbAtMaxRss: number;
  /** VmHWM at the end: the kernel's peak RSS, spikes between samples included */
  peakMb: number;
  /** VmHWM was reset at the start of the run: peakMb is this run's peak (else: since the worker started) */
  peakOfRun: boolean;
}

/** Resets the kernel's peak-RSS mark (VmHWM) to the current RSS: clear_refs "5" (Linux >= 4.0). */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false; // not permitted here: VmHWM then holds the peak since the worker started
  }
}

/** Samples every worker's RSS every `everyMs` until stop(). */
export function sampleMemory(workerPids: () => number[], everyMs = 100) {
  const seen = new Map<number, WorkerMemory>();
  const reset = new Set(workerPids().filter(resetPeak));
  const sample = () => {
    for (const pid of workerPids()) {
      const memory = memoryOf(pid);
      if (!memory) continue;
      const entry = seen.get(pid) ?? { pid, maxRssMb: 0, fileMbAtMaxRss: 0, peakMb: 0, peakOfRun: reset.has(pid) };
      if (memory.rssMb > entry.maxRssMb) Object.assign(entry, { maxRssMb: memory.rssMb, fileMbAtMaxRss: memory.fileMb });
      entry.peakMb = Math.max(entry.peakMb, memory.peakMb);
      seen.set(pid, entry);
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop(): WorkerMemory[] {
      clearInterval(timer);
      sample();
      return [...seen.values()].sort((a, b) => a.pid - b.pid);
    },
  };
}
