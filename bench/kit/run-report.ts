// A load run's record (run-record.ts): the machine it ran on (versions, commit, load), the targets
// judged, each scenario's loads and the notes, which its table (report.ts) and the docs' tables are rendered from.
import { Redis } from 'ioredis';
import type { KitConfig } from './config.js';
import type { Dataset } from './dataset.js';
import type { CommitFacts } from './checkout.js';
import { phasesLoop, type ScenarioResult } from './results.js';
import type { RevocationFigures } from './revocation.js';
import { type LoadRecord, machineOfRun, recordHead, type ScenarioRow } from './run-record.js';
import { SENSOR_SCRIPTS, type ScriptTarget, type SensorScriptResults } from './sensor-targets.js';
import { pairedP50Ratio } from './statistics.js';
import { evaluateTargets } from './targets.js';
import { type VariantResult, variantLine } from './variants.js';

async function redisVersionAt(redisUrl: string): Promise<string> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  return redis
    .connect()
    .then(() => redis.info('server'))
    .then(
      (info) => /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
      () => 'unknown',
    )
    .finally(() => redis.disconnect());
}

export interface RunOutcome {
  config: Pick<KitConfig, 'mode' | 'seconds' | 'order'>;
  startedAt: Date;
  loadAtStart: number;
  scenarios: ScenarioResult[];
  revocation: RevocationFigures | { error: string } | null;
  /** the cluster variants against the cluster as shipped (null: none run) */
  variants: VariantResult[] | null;
  /** bench/sensor-*.ts on each storage profile (null: not run, --only) */
  sensorScripts: SensorScriptResults | null;
}

/** a latency to a tenth of a millisecond: the histograms' 3 digits read a bucket's top (30.015 for 30) */
const tenths = (ms: number) => Math.round(ms * 10) / 10;

function scenarioRow(scenario: ScenarioResult): ScenarioRow {
  const servers: ScenarioRow['servers'] = {};
  for (const server of ['project', 'reference'] as const) {
    const summary = scenario.summary[server];
    if (!summary) continue;
    // the event loop of a phase, on the row of its first load (its others ran beside it)
    const loads = scenario.runs.find((run) => run.server === server)?.loads ?? [];
    const leads = (label: string) => loads.find((load) => load.phase === loads.find((l) => l.label === label)?.phase)?.label === label;
    servers[server] = {
      loads: Object.entries(summary.loads).map(([label, load]) => {
        // no answer completed within the run: there is no latency to show
        const latency = (ms: number) => (load.reqPerS > 0 ? tenths(ms) : null);
        const { p50, p97_5, p99 } = load.latencyMs;
        return {
          label,
          okPerS: load.okPerS,
          p50Ms: latency(p50),
          p97_5Ms: latency(p97_5),
          p99Ms: latency(p99),
          non2xx: load.non2xx,
          errors: load.errors,
          loopP99Ms: leads(label) ? (phasesLoop(scenario.runs, label, server)?.p99Ms ?? null) : null,
        };
      }),
      peakRssMb: summary.peakOfRuns ? summary.peakRssMb : summary.rssMb,
      loopP99Ms: summary.loop?.p99Ms ?? null,
    };
  }
  return { id: scenario.id, notMeasured: scenario.status === 'measured' ? null : (scenario.reason ?? 'not measured'), servers };
}

/** The lines after the scenarios: the cluster's deep-walk figure beside P3's, the revocation, the variants. */
function notesOf(outcome: RunOutcome): string[] {
  const notes: string[] = [];
  const deep = outcome.scenarios.find((scenario) => scenario.id === 'deep-walk' && scenario.status === 'measured');
  const pairs = deep && pairedP50Ratio(deep.runs, 'project', 'page 500', 'page 1');
  if (pairs) {
    // the cluster's figure beside P3's (the scripts'): warm pages, one profile, under load
    const interval = pairs.interval ? `, 95 % CI ${pairs.interval[0].toFixed(2)}-${pairs.interval[1].toFixed(2)}x` : '';
    notes.push(
      `${'deep-walk'.padEnd(16)} page 500 / page 1 p50: ${pairs.mean.toFixed(2)}x over ${pairs.ratios.length} alternating pairs${interval}`,
    );
  }
  const revocation = outcome.revocation;
  if (revocation) {
    notes.push(
      'error' in revocation
        ? `${'revocation'.padEnd(16)} ${revocation.error}`
        : `${'revocation'.padEnd(16)} ${revocation.rounds} rounds: ${revocation.acceptedAfterRevoke} of ${revocation.requestsAfterRevoke} requests started after the revoke returned were accepted ` +
            `(${JSON.stringify(revocation.statusesAfterRevoke)}); ${revocation.acceptedBeforeRevoke} accepted before; revoke p50 ${revocation.revokeMs.p50.toFixed(1)} ms`,
    );
  }
  return [...notes, ...(outcome.variants ?? []).map(variantLine)];
}

/** The run's record, the engines asked for their versions. */
export async function assembleRecord(
  outcome: RunOutcome,
  at: { dataset: Dataset; redisUrl: string; partial: string[] },
): Promise<LoadRecord> {
  const versions = await at.dataset.pool.query<{ version: string }>('SELECT version()');
  const postgres = versions.rows[0]?.version.split(' on ')[0] ?? 'unknown';
  const machine = machineOfRun(outcome.loadAtStart, postgres, await redisVersionAt(at.redisUrl));
  return loadRecordOf(outcome, { machine, partial: at.partial });
}

export function loadRecordOf(
  outcome: RunOutcome,
  at: { machine: LoadRecord['machine']; partial: string[]; commit?: CommitFacts; finishedAt?: Date },
): LoadRecord {
  const { config, startedAt, sensorScripts: scripts } = outcome;
  return {
    ...recordHead('load', { ...at, startedAt }),
    mode: config.mode,
    seconds: config.seconds,
    runsPerServer: config.order.length / 2,
    targets: evaluateTargets(outcome),
    scenarios: outcome.scenarios.map(scenarioRow),
    notes: notesOf(outcome),
    sensorScripts: scripts && {
      profiles: Object.fromEntries(
        Object.entries(scripts.profiles).map(([profile, where]) => [
          profile,
          { host: where.server ? new URL(where.server).host : null, reason: where.reason },
        ]),
      ) as NonNullable<LoadRecord['sensorScripts']>['profiles'],
      outcomes: scripts.outcomes,
      goals: Object.fromEntries(SENSOR_SCRIPTS.map(({ key, goal }) => [key, goal])) as Record<ScriptTarget, string>,
    },
  };
}
