// What a run measured, and its summary per scenario, load and server, which the targets and the record read.
import type { Server } from './config.js';
import { latencyOf } from './histograms.js';
import type { LatencyMs, LoadFigures } from './load.js';
import { type LoopDelay, mergeLoops } from './loop-delay.js';
import type { WebhookFigures } from './webhook-revokes.js';
import type { WorkerMemory } from './worker-memory.js';

export interface ServerRun {
  server: Server;
  /** position among the scenario's runs (0 = first) */
  position: number;
  loads: {
    phase: number;
    label: string;
    connections: number;
    overallRate: number | null;
    requestsInList: number;
    figures: LoadFigures;
    /** the workers' CPU time (user + system) during the load's phase, all its loads together; null when unknown */
    phaseWorkerCpuMs?: number | null;
    /** the event loop during the load's phase, when the scenario samples it */
    phaseLoop?: LoopDelay | { error: string } | null;
  }[];
  memory: WorkerMemory[];
  loop: LoopDelay | { error: string } | null;
  /** revokes timed to their webhooks beside the run (P17), or why they could not be */
  webhook?: WebhookFigures | { error: string };
}

export interface LoadSummary {
  reqPerS: number;
  okPerS: number;
  /** read from the runs' latency histograms merged (kit/histograms.ts) */
  latencyMs: LatencyMs;
  /** each run's own p99, in the order they ran (what the kit averaged before it merged histograms) */
  runP99Ms: number[];
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodes: Record<string, number>;
}

export interface ServerSummary {
  loads: Record<string, LoadSummary>;
  /** per worker: the highest RSS sampled in any run of the scenario */
  rssMb: number[];
  /** per worker: the file-backed part of that highest sample (absent in reports from before it was kept) */
  rssFileMb?: number[];
  /** per worker: the kernel's peak RSS (VmHWM) during the scenario's runs */
  peakRssMb: number[];
  /** false when VmHWM could not be reset: peakRssMb is then the peak since the worker started */
  peakOfRuns: boolean;
  /** the event loop over every run's phases, their histograms merged */
  loop: LoopDelay | null;
  loopError: string | null;
}

export interface ScenarioResult {
  id: string;
  status: 'measured' | 'not measured';
  reason: string | null;
  /** project/reference, in the order they ran */
  runs: ServerRun[];
  summary: Partial<Record<Server, ServerSummary>>;
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);

/** The workers' CPU time per answer of a load, over the phases it ran alone in; null when unknown. */
export function cpuMsPerAnswer(runs: ServerRun[], label: string, server: Server = 'project'): number | null {
  let cpuMs = 0;
  let answers = 0;
  for (const run of runs.filter((r) => r.server === server)) {
    for (const load of run.loads.filter((l) => l.label === label)) {
      if (typeof load.phaseWorkerCpuMs !== 'number' || run.loads.filter((other) => other.phase === load.phase).length > 1) return null;
      cpuMs += load.phaseWorkerCpuMs;
      answers += load.figures.responses;
    }
  }
  return answers > 0 ? cpuMs / answers : null;
}

/** The file-backed part of the run whose sample was the worker's highest. */
function fileAtHighest(samples: (WorkerMemory | undefined)[]): number {
  const present = samples.filter((m): m is WorkerMemory => !!m);
  return present.length ? present.reduce((a, b) => (b.maxRssMb > a.maxRssMb ? b : a)).fileMbAtMaxRss : 0;
}

export function summarize(runs: ServerRun[], server: Server): ServerSummary | undefined {
  const mine = runs.filter((run) => run.server === server);
  if (mine.length === 0) return undefined;
  const labels = [...new Set(mine.flatMap((run) => run.loads.map((load) => load.label)))];
  const loads: Record<string, LoadSummary> = {};
  for (const label of labels) {
    const figures = mine.flatMap((run) => run.loads.filter((load) => load.label === label).map((load) => load.figures));
    const statusCodes: Record<string, number> = {};
    for (const f of figures)
      for (const [code, count] of Object.entries(f.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
    loads[label] = {
      reqPerS: mean(figures.map((f) => f.reqPerS)),
      okPerS: mean(figures.map((f) => f.okPerS)),
      // every run carries its histogram (load.ts): percentiles do not average
      latencyMs: latencyOf(figures.map((f) => f.latencyHistogram))!,
      runP99Ms: figures.map((f) => f.latencyMs.p99),
      errors: figures.reduce((sum, f) => sum + f.errors, 0),
      timeouts: figures.reduce((sum, f) => sum + f.timeouts, 0),
      non2xx: figures.reduce((sum, f) => sum + f.non2xx, 0),
      statusCodes,
    };
  }
  const workers = Math.max(...mine.map((run) => run.memory.length));
  const perWorker = (pick: (m: WorkerMemory) => number) =>
    Array.from({ length: workers }, (_, i) => Math.max(0, ...mine.map((run) => (run.memory[i] ? pick(run.memory[i]!) : 0))));
  const loops = mine.map((run) => run.loop).filter((loop): loop is LoopDelay => !!loop && 'p99Ms' in loop);
  const loopError = mine.map((run) => run.loop).find((loop): loop is { error: string } => !!loop && 'error' in loop)?.error ?? null;
  return {
    loads,
    rssMb: perWorker((m) => m.maxRssMb),
    rssFileMb: Array.from({ length: workers }, (_, i) => fileAtHighest(mine.map((run) => run.memory[i]))),
    peakRssMb: perWorker((m) => m.peakMb),
    peakOfRuns: mine.every((run) => run.memory.every((m) => m.peakOfRun)),
    loop: mergeLoops(loops),
    loopError,
  };
}

/** The headline load of a scenario: the first load of its first phase. */
export const headline = (scenario: ScenarioResult, server: Server): LoadSummary | undefined => {
  const summary = scenario.summary[server];
  const first = scenario.runs.find((run) => run.server === server)?.loads[0]?.label;
  return summary && first ? summary.loads[first] : undefined;
};

/** The event loop over the phases of one load over one server's runs, merged; null when none was read. */
export function phasesLoop(runs: ServerRun[], label: string, server: Server): LoopDelay | null {
  const loops = runs
    .filter((run) => run.server === server)
    .flatMap((run) => run.loads.filter((load) => load.label === label).map((load) => load.phaseLoop))
    .filter((loop): loop is LoopDelay => !!loop && 'p99Ms' in loop);
  return mergeLoops(loops);
}
