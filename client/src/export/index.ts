// Exports the sensor history a token may read to one file per cooling unit, resumably, through
// the client (its shared rate-limit budget, retries and typed errors). `npm run export`
// (src/cli/export.ts) is the command line around it.
//
// DIR/
//   cooling-unit-<id>.csv | .ndjson  one file per unit: every record of the unit over the range,
//                                    ordered by timestamp then specification_type (HUMIDITY first);
//                                    CSV starts with the header line (plan.ts)
//   export-checkpoint.json           parameters, units and progress (checkpoint.ts); kept when the
//                                    export is complete, so a re-run finds nothing left to do
//   export.lock                      while an export runs: its pid
//
// Nothing there is trusted: DIR may hold only these files (directory.ts, else refused), each is
// opened without following links (safe-files.ts), and a checkpoint found is checked against the
// parameters and the files before the export continues from it (checkpoint-check.ts): a unit whose
// file does not match is exported again from the start.
//
// Units: the ids asked for, or with units "all" every unit the token may read, found once and
// kept in the checkpoint (discover-units.ts): from GET /analytics/utilization over a single day
// when the token has the utilization scope (its records are a (day x unit) grid: one request lists
// up to 1,000 units, with or without readings: a unit without any gets a file with no records),
// otherwise from the cooling_unit_id of the daily sensor-data pages over the whole range (only
// units with readings then; daily windows of up to 3,660 days). A found unit whose sensor history
// answers 404 (a deleted unit, which utilization still reports on for the days it was live) is
// skipped, and the checkpoint says so; a listed unit that answers 404 stops the export.
// With units "all", the export reads every unit at once by bulk pull, a slice of days at a time
// (bulk-export.ts), unless `method` is "pages" or the service has none. Otherwise each unit's range
// is read window by window (366 days, 3,660 with daily aggregates), page after page (unit-file.ts);
// units are read in parallel (`concurrency`), all within the token's one budget.
// Below, exportSensorHistory's steps; the options and reports it takes and gives: options.ts.
import type { Hash } from 'node:crypto';
import { join } from 'node:path';
import type { ColdtrackClient } from '../index.js';
import type { CallOptions } from '../transport.js';
import {
  type Checkpoint,
  CHECKPOINT_FILE,
  CHECKPOINT_VERSION,
  CheckpointError,
  CheckpointWriter,
  type ExportIdentity,
  lockDirectory,
  newUnit,
  readCheckpointText,
} from './checkpoint.js';
import { DifferentExportError, parseCheckpoint, verifyUnits } from './checkpoint-check.js';
import { readChangesCursor } from './changes-cursor.js';
import { checkDirectory, makeOutDirectory } from './directory.js';
import { exportInBulk, newBulkProgress } from './bulk-export.js';
import { discoverUnits, type FoundUnits } from './discover-units.js';
import type { ExportOptions, ExportProgress, ExportSummary } from './options.js';
import { MAX_WINDOW_DAYS, windowsOf } from './plan.js';
import { exportUnit, type UnitRun } from './unit-file.js';

export { CHECKPOINT_FILE, CheckpointError, LOCK_FILE } from './checkpoint.js';
export { OWN_FILES } from './directory.js';
export { ExportDirectoryError } from './safe-files.js';
export { type ChangesCursor, ChangesCursorError, CURSOR_FILE, readChangesCursor, takeStartingCursor } from './changes-cursor.js';
export * from './delta.js';
export type { ExportOptions, ExportProgress, ExportSummary } from './options.js';
export {
  AGGREGATIONS,
  type Aggregation,
  CSV_COLUMNS,
  type ExportFormat,
  FORMATS,
  MAX_WINDOW_DAYS,
  parseDay,
  unitFileName,
  windowsOf,
} from './plan.js';

/** A unit's export failed: which unit, and why (the client's error as `cause`). */
export class ExportUnitError extends Error {
  override readonly name = 'ExportUnitError';

  constructor(
    readonly unitId: number,
    cause: unknown,
  ) {
    super(`cooling unit ${unitId}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The directory holds another export (different parameters): continuing would mix the two. */
export class ExportConflictError extends Error {
  override readonly name = 'ExportConflictError';
}

const DEFAULT_PAGE_SIZE = 1000;
const DEFAULT_CONCURRENCY = 4;

/** Exports into `options.outDir`, or continues the export found there; resolves once every unit's file is complete. */
export async function exportSensorHistory(client: ColdtrackClient, options: ExportOptions): Promise<ExportSummary> {
  const identity = identityOf(options);
  await makeOutDirectory(options.outDir);
  const unlock = await lockDirectory(options.outDir);
  const stop = stopOnCallerAbort(options.signal);
  const call: CallOptions = { signal: stop.signal };
  let pages = 0;
  const countPage = () => {
    pages++;
  };
  try {
    const { checkpoint, resumed, verified, changed } = await continueOrStart(client, options, identity, call, countPage);
    const writer = new CheckpointWriter(options.outDir, checkpoint);
    if (changed) await writer.save();
    const recordsBefore = recordsIn(checkpoint);
    const summary = (alreadyComplete: boolean) => summarize(checkpoint, options.outDir, { recordsBefore, pages, resumed, alreadyComplete });
    if (checkpoint.complete) return summary(true);

    const progress = () => options.onProgress?.(progressOf(checkpoint, pages));
    progress();
    if (resumed) options.onNotice?.(resumeNotice(checkpoint, recordsBefore));
    if (checkpoint.bulk && (await exportInBulk({ client, call, options, checkpoint, writer, verified, countPage, progress }))) {
      checkpoint.complete = true;
      await writer.save();
      progress();
      return summary(false);
    }
    // a service without bulk pulls: by pages (nothing was written by bulk)
    if (checkpoint.bulk) {
      delete checkpoint.bulk;
      options.onNotice?.('the service has no bulk pulls: exporting page by page');
      if (checkpoint.units_from === 'bulk') {
        const found = await discoverUnits(client, options, call, countPage);
        checkpoint.units_from = found.from;
        for (const id of found.unitIds) checkpoint.units[id] = newUnit(id, options.format, checkpoint.windows.length);
        options.onNotice?.(`${found.unitIds.length} units found (from ${found.from}): ${found.unitIds.join(', ') || 'none'}`);
      }
    }
    const run: UnitRun = { client, call, options, pageSize: identity.page_size, checkpoint, writer, verified, countPage, progress };
    const pending = unitIdsOf(checkpoint).filter((id) => !checkpoint.units[id]!.done);
    const failure = await exportInParallel(pending, options.concurrency ?? DEFAULT_CONCURRENCY, stop, (unitId) => exportUnit(run, unitId));
    // an interrupt is reported as one, even when a unit had failed before it
    if (options.signal?.aborted) throw options.signal.reason;
    if (failure) throw failure;
    checkpoint.complete = true;
    await writer.save();
    progress();
    return summary(false);
  } finally {
    stop.release();
    await unlock();
  }
}

/** What the export is, as the checkpoint records it (a re-run must ask for the same). */
function identityOf(options: ExportOptions): ExportIdentity {
  return {
    base_url: options.baseUrl,
    from: options.from,
    to: options.to,
    aggregation: options.aggregation,
    // the same units in another order are the same export
    units: options.units === 'all' ? 'all' : [...new Set(options.units)].sort((a, b) => a - b),
    format: options.format,
    page_size: options.pageSize ?? DEFAULT_PAGE_SIZE,
  };
}

/** The units' common stop: the caller's abort, or the first unit that fails (which stops the others). */
function stopOnCallerAbort(signal: AbortSignal | undefined) {
  const stop = new AbortController();
  const stopOnAbort = () => stop.abort(signal!.reason);
  signal?.addEventListener('abort', stopOnAbort, { once: true });
  return {
    signal: stop.signal,
    abort: (reason: unknown) => stop.abort(reason),
    release: () => signal?.removeEventListener('abort', stopOnAbort),
  };
}

/** The checkpoint in the directory, if it is this export's; else a new one (units found once, here). */
async function continueOrStart(
  client: ColdtrackClient,
  options: ExportOptions,
  identity: ExportIdentity,
  call: CallOptions,
  countPage: () => void,
) {
  const text = await readCheckpointText(options.outDir);
  if (text !== null) {
    const previous = readPrevious(text, options.outDir, identity);
    // the deltas --since-last wrote beside the files are the export's own too
    await checkDirectory(options.outDir, previous, identity.format, (await readChangesCursor(options.outDir))?.deltas ?? 0);
    const { verified, changed } = await verifyUnits(previous, options);
    // a unit started again from nothing in a bulk export: every slice is read again (the others'
    // files skip the records they hold)
    if (changed && previous.bulk && Object.values(previous.units).some((unit) => unit.bytes === 0)) previous.bulk = newBulkProgress();
    return { checkpoint: previous, resumed: true, verified, changed };
  }
  // nothing is asked of the service for a folder the export refuses
  await checkDirectory(options.outDir, null, identity.format);
  const windows = windowsOf(options.from, options.to, MAX_WINDOW_DAYS[options.aggregation]);
  let found: FoundUnits = { unitIds: identity.units as number[], from: 'listed' };
  const bulk = options.units === 'all' && options.method !== 'pages';
  if (options.units === 'all') {
    found = await discoverUnits(client, options, call, countPage, bulk);
    if (found.from === 'bulk') options.onNotice?.('units: those the bulk pull names, found as it goes');
    else options.onNotice?.(`${found.unitIds.length} units found (from ${found.from}): ${found.unitIds.join(', ') || 'none'}`);
  }
  const checkpoint: Checkpoint = {
    version: CHECKPOINT_VERSION,
    export: identity,
    windows,
    units_from: found.from,
    units: Object.fromEntries(found.unitIds.map((id) => [String(id), newUnit(id, options.format, windows.length)])),
    complete: false,
    // every unit: by bulk pull unless asked for pages (a list of units is read unit by unit)
    ...(bulk ? { bulk: newBulkProgress() } : {}),
    updated_at: '',
    seal: '', // CheckpointWriter seals what it writes
  };
  return { checkpoint, resumed: false, verified: new Map<number, Hash>(), changed: true };
}

/** The checkpoint's text as this export's, or why not: another export's is an ExportConflictError. */
function readPrevious(text: string, outDir: string, identity: ExportIdentity): Checkpoint {
  try {
    return parseCheckpoint(text, identity, join(outDir, CHECKPOINT_FILE));
  } catch (error) {
    if (!(error instanceof DifferentExportError)) throw error;
    throw new ExportConflictError(
      `${outDir} holds another export: its ${error.difference} differ; choose another --out, or delete ${outDir} to start over`,
    );
  }
}

const unitIdsOf = (checkpoint: Checkpoint) => Object.keys(checkpoint.units).map(Number);
const exportedIdsOf = (checkpoint: Checkpoint) => unitIdsOf(checkpoint).filter((id) => !checkpoint.units[id]!.skipped);
const recordsIn = (checkpoint: Checkpoint) => unitIdsOf(checkpoint).reduce((sum, id) => sum + checkpoint.units[id]!.records, 0);

function resumeNotice(checkpoint: Checkpoint, recordsBefore: number): string {
  const exported = exportedIdsOf(checkpoint);
  return `resuming: ${exported.filter((id) => checkpoint.units[id]!.done).length} of ${exported.length} units done, ${recordsBefore.toLocaleString('en-US')} records already written`;
}

function summarize(
  checkpoint: Checkpoint,
  outDir: string,
  run: { recordsBefore: number; pages: number; resumed: boolean; alreadyComplete: boolean },
): ExportSummary {
  const units = exportedIdsOf(checkpoint);
  const records = recordsIn(checkpoint);
  return {
    units,
    unitsFrom: checkpoint.units_from,
    files: units.map((id) => join(outDir, checkpoint.units[id]!.file)),
    records,
    recordsThisRun: records - run.recordsBefore,
    pages: run.pages,
    resumed: run.resumed,
    alreadyComplete: run.alreadyComplete,
  };
}

/**
 * Exports the units `concurrency` at a time. The first failure stops the others (through `stop`)
 * and is returned, a CheckpointError as it is, any other wrapped with its unit; null if none.
 */
async function exportInParallel(
  unitIds: number[],
  concurrency: number,
  stop: { signal: AbortSignal; abort(reason: unknown): void },
  exportOne: (unitId: number) => Promise<void>,
): Promise<unknown> {
  const queue = [...unitIds];
  let failure: unknown = null;
  const worker = async () => {
    for (let unitId = queue.shift(); unitId !== undefined && !stop.signal.aborted; unitId = queue.shift()) {
      try {
        await exportOne(unitId);
      } catch (error) {
        if (!stop.signal.aborted) {
          failure = error instanceof CheckpointError ? error : new ExportUnitError(unitId, error);
          stop.abort(failure);
        }
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, unitIds.length)) }, worker));
  return failure;
}

/** Records written, and the total as far as first pages told it (unknown windows at the average). */
function progressOf(checkpoint: Checkpoint, pages: number): ExportProgress {
  const units = Object.values(checkpoint.units).filter((unit) => !unit.skipped);
  const known = units.flatMap((unit) => unit.window_totals.filter((total): total is number => total !== null));
  const unknown = units.reduce((sum, unit) => sum + unit.window_totals.filter((total) => total === null).length, 0);
  const average = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : null;
  const records = units.reduce((sum, unit) => sum + unit.records, 0);
  return {
    records,
    estimatedTotal:
      unknown === 0 || average !== null ? Math.max(records, Math.round(known.reduce((a, b) => a + b, 0) + unknown * (average ?? 0))) : null,
    pages,
    unitsDone: units.filter((unit) => unit.done).length,
    unitsTotal: units.length,
  };
}
