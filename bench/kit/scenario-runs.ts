// The scenarios against both clusters: a pilot per server sizes the runs' credentials, the measured
// runs alternate servers (the next scenario mirrors the order), a run that met 429s runs once more
// with more tokens; the workers' CPU time is read around each phase.
import { readFileSync } from 'node:fs';
import { type KitConfig, layoutOf, type Server, WORKERS } from './config.js';
import { countingCredentials, type CredentialNeeds } from './credentials.js';
import { type LoadFigures, type RequestSpec, runLoad } from './load.js';
import { type LoopDelay, mergeLoops, startLoopWindow } from './loop-delay.js';
import { type ScenarioResult, type ServerRun, summarize } from './results.js';
import { type BuildContext, BY_CURSOR, CURRENT_ETAG, type Load, type Scenario } from './scenarios.js';
import type { Service } from './services.js';
import { sleep } from './processes.js';
import { startWebhookRevokes, type WebhookRevokePlan, type WebhookRevokes } from './webhook-revokes.js';
import { webhookLine } from './webhook-target.js';
import { sampleMemory } from './worker-memory.js';

/** Seconds of the pilot that sizes each server's runs of a scenario. */
const PILOT_SECONDS = 1.5;
/** The rate before any pilot: the most a load can be sized for. */
export const atCeiling = (_label: string, ceiling: number) => ceiling;

/** Credentials every run could take: every pilot, warm-up and run built with counting pools at the ceilings. */
export function planCredentials(config: KitConfig, selected: Scenario[], warmups: Scenario[] = []): CredentialNeeds {
  const counting = countingCredentials();
  const context: BuildContext = {
    layout: layoutOf(config.dataset),
    credentials: counting,
    seconds: config.seconds,
    sensorAvailable: true,
    rate: atCeiling,
  };
  for (const scenario of selected) {
    for (let i = 0; i < 2; i++) scenario.build({ ...context, seconds: PILOT_SECONDS });
    // every run, and one retry per server
    for (let i = 0; i < config.order.length + 2; i++) {
      scenario.build(context);
      scenario.webhookRevokes?.(context);
    }
  }
  // a fresh cluster's warm-up is one pilot more (kit/variants.ts)
  for (const scenario of warmups) scenario.build({ ...context, seconds: PILOT_SECONDS });
  counting.alpha.take(config.revocationRounds + 1); // P7 rounds, the sensor probe
  return { alpha: counting.alpha.used + 20, mixed: counting.mixed.used + 20, managers: counting.managers.used + 5 };
}

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 10 ms. */
const TICK_MS = 10;

/** CPU time the processes have used (user + system, from /proc/<pid>/stat), in ms; null once one has exited. */
function cpuMsOf(pids: number[]): number | null {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // "pid (comm) state ...": utime and stime are fields 14 and 15
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return null;
    }
  }
  return ticks * TICK_MS;
}

const without = (headers: Record<string, string>, name: string) =>
  Object.fromEntries(Object.entries(headers).filter(([header]) => header !== name));

/** Every request of the phases (warm-ups included) rewritten by `rewrite`. */
const mapRequests = (phases: Load[][], rewrite: (spec: RequestSpec) => RequestSpec): Load[][] =>
  phases.map((phase) =>
    phase.map((load) => ({
      ...load,
      requests: load.requests.map(rewrite),
      warmup: load.warmup && { ...load.warmup, requests: load.warmup.requests.map(rewrite) },
    })),
  );

/**
 * The requests as the server is to get them, asked once a path with its first token: CURRENT_ETAG
 * becomes the path's ETag, a BY_CURSOR `page=N` the cursor page N - 1 gives (each dropped where none).
 */
export async function resolved(url: string, phases: Load[][]): Promise<Load[][]> {
  const specs = phases.flat().flatMap((load) => [...load.requests, ...(load.warmup?.requests ?? [])]);
  const etags = new Map<string, string | null>();
  const cursors = new Map<string, string | null>();
  for (const spec of specs) {
    if (spec.headers['if-none-match'] === CURRENT_ETAG && !etags.has(spec.path)) {
      const response = await fetch(url + spec.path, { headers: without(spec.headers, 'if-none-match') });
      await response.arrayBuffer();
      etags.set(spec.path, response.ok ? response.headers.get('etag') : null);
    }
    if (spec.headers[BY_CURSOR] && !cursors.has(spec.path)) {
      const page = Number(/[?&]page=(\d+)/.exec(spec.path)![1]);
      const response = await fetch(url + spec.path.replace(/([?&])page=\d+/, `$1page=${page - 1}`), {
        headers: without(spec.headers, BY_CURSOR),
      });
      const body = (await response.json().catch(() => null)) as { meta?: { pagination?: { next_cursor?: string | null } } } | null;
      cursors.set(spec.path, (response.ok && body?.meta?.pagination?.next_cursor) || null);
    }
  }
  if (etags.size === 0 && cursors.size === 0) return phases;
  return mapRequests(phases, (spec) => {
    if (spec.headers['if-none-match'] === CURRENT_ETAG) {
      const etag = etags.get(spec.path);
      const headers = without(spec.headers, 'if-none-match');
      return { ...spec, headers: etag ? { ...headers, 'if-none-match': etag } : headers };
    }
    if (spec.headers[BY_CURSOR]) {
      const cursor = cursors.get(spec.path);
      const path = cursor ? spec.path.replace(/([?&])page=\d+/, `$1cursor=${cursor}`) : spec.path;
      return { ...spec, path, headers: without(spec.headers, BY_CURSOR) };
    }
    return spec;
  });
}

/** A short unmeasured run at the ceilings: its busiest second sizes the measured runs' token lists. */
async function pilot(service: Service, built: Load[][]): Promise<Map<string, number>> {
  const rates = new Map<string, number>();
  const phases = await resolved(service.url, built);
  for (const phase of phases) {
    const results = await Promise.all(
      phase.map((load) =>
        runLoad({
          url: service.url,
          connections: load.connections,
          duration: PILOT_SECONDS,
          overallRate: load.overallRate,
          requests: load.requests,
          spread: true,
        }),
      ),
    );
    phase.forEach((load, i) => rates.set(load.label, results[i]!.peakPerS));
  }
  return rates;
}

async function warm(service: Service, load: Load) {
  if (!load.warmup) return;
  await runLoad({ url: service.url, connections: load.warmup.connections, amount: load.warmup.amount, requests: load.warmup.requests });
}

/** One measured run: warm-up, then every phase's loads at once, with memory (and the event loop) sampled. */
async function runScenarioOn(
  service: Service,
  server: Server,
  position: number,
  built: Load[][],
  eventLoop: boolean,
  seconds: number,
  webhookPlan: WebhookRevokePlan | null,
): Promise<ServerRun> {
  const phases = await resolved(service.url, built);
  for (const phase of phases) for (const load of phase) await warm(service, load);
  await sleep(200); // let the warm-up's last answers settle
  // a failure to start (the endpoint refused) is the run's figure, not the whole bench's end
  const revokes: WebhookRevokes | { error: string } | null = webhookPlan
    ? await startWebhookRevokes(service.url, webhookPlan).catch((error: Error) => ({ error: error.message }))
    : null;
  const memory = sampleMemory(service.workerPids);
  const loads: ServerRun['loads'] = [];
  const loops: NonNullable<ServerRun['loop']>[] = [];
  for (const [index, phase] of phases.entries()) {
    // the event loop is read per phase: a scenario alternating a control with its load compares them
    const loopWindow = eventLoop
      ? await startLoopWindow(service.build, service.url, WORKERS).catch((error: Error) => ({ error: error.message }))
      : null;
    const cpuBefore = cpuMsOf(service.workerPids());
    const results = await Promise.all(
      phase.map((load) =>
        runLoad(
          {
            url: service.url,
            connections: load.connections,
            duration: load.seconds ?? seconds,
            overallRate: load.overallRate,
            requests: load.requests,
            spread: true,
          },
          { nice: load.nice ?? false },
        ),
      ),
    );
    const cpuAfter = cpuMsOf(service.workerPids());
    const loop =
      loopWindow && 'read' in loopWindow ? await loopWindow.read().catch((error: Error) => ({ error: error.message })) : loopWindow;
    if (loop) loops.push(loop);
    phase.forEach((load, i) =>
      loads.push({
        phase: index,
        label: load.label,
        connections: load.connections,
        overallRate: load.overallRate ?? null,
        requestsInList: load.requests.length,
        figures: results[i] as LoadFigures,
        phaseWorkerCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
        phaseLoop: loop,
      }),
    );
  }
  const webhook = revokes && 'stop' in revokes ? await revokes.stop().catch((error: Error) => ({ error: error.message })) : revokes;
  // the run's figure: its phases' histograms as one (a failed read is said when no phase has a figure)
  const loop = mergeLoops(loops.filter((loop): loop is LoopDelay => 'p99Ms' in loop)) ?? loops[0] ?? null;
  return { server, position, loads, memory: memory.stop(), loop, ...(webhook ? { webhook } : {}) };
}

export interface ScenarioSetting {
  config: KitConfig;
  context: BuildContext;
  clusters: Record<Server, Service>;
  /** the sensor-data probe's verdict: scenarios that need the endpoint are skipped without it */
  sensor: { available: boolean; reason: string };
  /** checked before every run: an interrupted run stops at once */
  interrupted: () => boolean;
  log: (line: string) => void;
  /** the pilot peak a run's build sees: each server's own, or the lower of both (the same rate for both: kit/variants.ts) */
  pilotPeaks?: 'own' | 'lower';
}

/** Every selected scenario, in order, against both clusters. */
export async function runScenarios(selected: Scenario[], setting: ScenarioSetting): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const [index, scenario] of selected.entries()) {
    if (setting.interrupted()) throw new Error('interrupted');
    const base = { id: scenario.id };
    if (scenario.requiresSensor && !setting.sensor.available) {
      results.push({ ...base, status: 'not measured', reason: setting.sensor.reason, runs: [], summary: {} });
      continue;
    }
    const runs = await runBothServers(scenario, index, setting);
    results.push({
      ...base,
      status: 'measured',
      reason: null,
      runs,
      summary: { project: summarize(runs, 'project'), reference: summarize(runs, 'reference') },
    });
  }
  return results;
}

/** A scenario's pilot, built for its own seconds (also a fresh cluster's warm-up). */
export const pilotOf = (service: Service, scenario: Scenario, context: BuildContext) =>
  pilot(service, scenario.build({ ...context, seconds: PILOT_SECONDS }));

/** The pilot peak of a load a server's run is built with: its own, or the lower of both servers'; null if one is unknown. */
export function pilotPeakOf(estimates: Map<Server, Map<string, number>>, server: Server, label: string, which: 'own' | 'lower') {
  const peaks = which === 'lower' ? [...estimates.values()].map((rates) => rates.get(label)) : [estimates.get(server)?.get(label)];
  return peaks.length > 0 && peaks.every((peak) => peak !== undefined) ? Math.min(...(peaks as number[])) : null;
}

export async function runBothServers(scenario: Scenario, index: number, setting: ScenarioSetting): Promise<ServerRun[]> {
  const { config, context, clusters, log } = setting;
  // every other scenario swaps the roles (P,R,R,P becomes R,P,P,R): neither server always goes first
  const mirrored = index % 2 === 0 ? config.order : config.order.map((server): Server => (server === 'project' ? 'reference' : 'project'));
  const order = scenario.projectOnly ? mirrored.filter((server) => server === 'project') : mirrored;
  const estimates = new Map<Server, Map<string, number>>();
  for (const server of order.slice(0, 2)) {
    estimates.set(server, await pilotOf(clusters[server], scenario, context));
  }
  log(
    `${scenario.id}: pilot ${[...estimates].map(([server, rates]) => `${server} ${[...rates.values()].map((r) => r.toFixed(0)).join('+')}/s`).join(', ')}`,
  );
  const runs: ServerRun[] = [];
  const retried = new Set<Server>();
  // a rate raised after 429s sizes that server's later runs too: from the pilot's estimate again,
  // its next run would fall short the same way, with no retry left
  const raised = new Map<Server, (label: string, ceiling: number) => number>();
  for (const [position, server] of order.entries()) {
    const measured = estimates.get(server)!;
    let rate =
      raised.get(server) ?? ((label: string, ceiling: number) => Math.min(ceiling, Math.max(5, 2.5 * (measured.get(label) ?? ceiling))));
    for (;;) {
      if (setting.interrupted()) throw new Error('interrupted');
      log(`${scenario.id}: ${server} (run ${position + 1} of ${order.length})`);
      const pilotPeak = (label: string) => pilotPeakOf(estimates, server, label, setting.pilotPeaks ?? 'own');
      const runContext = { ...context, rate, pilotPeak };
      const run = await runScenarioOn(
        clusters[server],
        server,
        position,
        scenario.build(runContext),
        scenario.eventLoop ?? false,
        config.seconds,
        scenario.webhookRevokes?.(runContext) ?? null,
      );
      const headline = run.loads[0]!.figures;
      log(`  ${headline.okPerS.toFixed(1)} 2xx/s, p99 ${headline.latencyMs.p99} ms, non-2xx ${headline.non2xx}, errors ${headline.errors}`);
      if (run.webhook) log(`  webhooks: ${webhookLine(run.webhook)}`);
      // 429s: the token plan ran short of this server's real rate; once per server, plan for more
      const limited = run.loads.filter((load) => (load.figures.statusCodes['429'] ?? 0) > 0);
      if (limited.length === 0 || retried.has(server)) {
        runs.push(run);
        break;
      }
      retried.add(server);
      const previous = rate;
      const observed = new Map(run.loads.map((load) => [load.label, load.figures.peakPerS]));
      rate = (label, ceiling) => Math.min(ceiling, Math.max(2 * previous(label, ceiling), 3 * (observed.get(label) ?? 0)));
      raised.set(server, rate);
      log(`  429s in ${limited.map((load) => load.label).join(', ')}: the token plan ran short; running again with more tokens`);
    }
  }
  return runs;
}
