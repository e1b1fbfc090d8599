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
// Units: the ids asked for, or with units "all" every unit the token may read, found once and
// kept in the checkpoint: from GET /analytics/utilization over a single day when the token has the
// utilization scope (its records are a (day x unit) grid: one request lists up to 1,000 units,
// with or without readings: a unit without any gets a file with no records), otherwise from the
// cooling_unit_id of the daily sensor-data pages over the whole range (only units with readings
// then; daily windows of up to 3,660 days). A found unit whose sensor history answers 404 (a
// deleted unit, which utilization still reports on for the days it was live) is skipped, and the
// checkpoint says so; a listed unit that answers 404 stops the export.
// Each unit's range is read window by window (366 days, 3,660 with daily aggregates), page after
// page; units are read in parallel (`concurrency`), all within the token's one budget.
import { mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ColdtrackApiError } from '../errors.js';
import type { ColdtrackClient } from '../index.js';
import type { CallOptions } from '../transport.js';
import {
  type Checkpoint,
  CheckpointError,
  CheckpointWriter,
  type ExportIdentity,
  identityDifference,
  lockDirectory,
  readCheckpoint,
  type UnitProgress,
} from './checkpoint.js';
import { type Aggregation, compareKeys, type DateWindow, type ExportFormat, fileHeader, MAX_WINDOW_DAYS, recordLine, unitFileName, windowsOf } from './plan.js';

export { CHECKPOINT_FILE, CheckpointError, LOCK_FILE } from './checkpoint.js';
export { AGGREGATIONS, type Aggregation, CSV_COLUMNS, type ExportFormat, FORMATS, MAX_WINDOW_DAYS, parseDay, unitFileName, windowsOf } from './plan.js';

export interface ExportOptions {
  /** recorded in the checkpoint: a re-run against another service does not continue this one */
  baseUrl: string;
  from: string;
  to: string;
  aggregation: Aggregation;
  units: 'all' | number[];
  format: ExportFormat;
  outDir: string;
  /** records per request, 1..1000; default 1000 (the fewest requests out of the budget) */
  pageSize?: number;
  /** units read at once; default 4 */
  concurrency?: number;
  signal?: AbortSignal;
  onProgress?: (progress: ExportProgress) => void;
  /** a line worth showing: units found, a file resumed */
  onNotice?: (line: string) => void;
  /** between a page's records reaching its file and the checkpoint counting them (tests crash here) */
  onPageWritten?: (page: { unitId: number; page: number; records: number }) => void | Promise<void>;
}

export interface ExportProgress {
  /** records in the files, earlier runs included */
  records: number;
  /** estimate of all records, once a first page told a total (null before) */
  estimatedTotal: number | null;
  /** requests of this run that answered (unit discovery included) */
  pages: number;
  unitsDone: number;
  unitsTotal: number;
}

export interface ExportSummary {
  units: number[];
  unitsFrom: string;
  files: string[];
  records: number;
  /** records written by this run */
  recordsThisRun: number;
  pages: number;
  resumed: boolean;
  /** the checkpoint said complete: nothing was fetched */
  alreadyComplete: boolean;
}

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

async function discoverUnits(client: ColdtrackClient, options: ExportOptions, call: CallOptions, countPage: () => void) {
  const ids = new Set<number>();
  try {
    const day = { start_date: options.from, end_date: options.from, period: 'day' as const };
    for await (const page of client.pages('utilization', day, call)) {
      countPage();
      for (const record of page.data) ids.add(record.cooling_unit_id);
    }
    return { unitIds: [...ids].sort((a, b) => a - b), from: 'utilization' };
  } catch (error) {
    if (!(error instanceof ColdtrackApiError && error.status === 403)) throw error;
  }
  for (const window of windowsOf(options.from, options.to, MAX_WINDOW_DAYS.daily)) {
    for await (const page of client.pages('sensorData', { ...window, aggregation: 'daily' }, call)) {
      countPage();
      for (const record of page.data) ids.add(record.cooling_unit_id);
    }
  }
  return { unitIds: [...ids].sort((a, b) => a - b), from: 'sensor-data' };
}

function newUnit(unitId: number, format: ExportFormat, windows: number): UnitProgress {
  return {
    file: unitFileName(unitId, format),
    window: 0,
    next_page: 1,
    bytes: 0,
    records: 0,
    last: null,
    window_totals: Array.from({ length: windows }, () => null),
    done: false,
  };
}

export async function exportSensorHistory(client: ColdtrackClient, options: ExportOptions): Promise<ExportSummary> {
  const { outDir, format, aggregation } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const identity: ExportIdentity = {
    base_url: options.baseUrl,
    from: options.from,
    to: options.to,
    aggregation,
    // the same units in another order are the same export
    units: options.units === 'all' ? 'all' : [...new Set(options.units)].sort((a, b) => a - b),
    format,
    page_size: pageSize,
  };
  await mkdir(outDir, { recursive: true });
  const unlock = await lockDirectory(outDir);
  // the first failure stops the other units too
  const stop = new AbortController();
  const stopOnAbort = () => stop.abort(options.signal!.reason);
  options.signal?.addEventListener('abort', stopOnAbort, { once: true });
  const call: CallOptions = { signal: stop.signal };
  let pages = 0;
  try {
    let checkpoint = await readCheckpoint(outDir);
    const resumed = checkpoint !== null;
    if (checkpoint) {
      const difference = identityDifference(checkpoint.export, identity);
      if (difference) {
        throw new ExportConflictError(`${outDir} holds another export: its ${difference} differ; choose another --out, or delete ${outDir} to start over`);
      }
    } else {
      const windows: DateWindow[] = windowsOf(options.from, options.to, MAX_WINDOW_DAYS[aggregation]);
      const found = options.units === 'all'
        ? await discoverUnits(client, options, call, () => pages++)
        : { unitIds: identity.units as number[], from: 'listed' };
      if (options.units === 'all') options.onNotice?.(`${found.unitIds.length} units found (from ${found.from}): ${found.unitIds.join(', ') || 'none'}`);
      checkpoint = {
        version: 1,
        export: identity,
        windows,
        units_from: found.from,
        units: Object.fromEntries(found.unitIds.map((id) => [String(id), newUnit(id, format, windows.length)])),
        complete: false,
        updated_at: '',
      };
    }
    const writer = new CheckpointWriter(outDir, checkpoint);
    if (!resumed) await writer.save();
    const unitIds = Object.keys(checkpoint.units).map(Number);
    const files = () => unitIds.filter((id) => !checkpoint!.units[id]!.skipped).map((id) => join(outDir, checkpoint!.units[id]!.file));
    const recordsBefore = unitIds.reduce((sum, id) => sum + checkpoint!.units[id]!.records, 0);
    const summary = (alreadyComplete: boolean): ExportSummary => {
      const records = unitIds.reduce((sum, id) => sum + checkpoint!.units[id]!.records, 0);
      return { units: unitIds.filter((id) => !checkpoint!.units[id]!.skipped), unitsFrom: checkpoint!.units_from, files: files(), records, recordsThisRun: records - recordsBefore, pages, resumed, alreadyComplete };
    };
    if (checkpoint.complete) return summary(true);

    const progress = () => options.onProgress?.(progressOf(checkpoint!, pages));
    progress();
    const pending = unitIds.filter((id) => !checkpoint!.units[id]!.done);
    if (resumed) {
      const exported = unitIds.filter((id) => !checkpoint!.units[id]!.skipped);
      options.onNotice?.(`resuming: ${exported.filter((id) => checkpoint!.units[id]!.done).length} of ${exported.length} units done, ${recordsBefore.toLocaleString('en-US')} records already written`);
    }

    const exportUnit = async (unitId: number) => {
      const state = checkpoint!.units[unitId]!;
      const path = join(outDir, state.file);
      const handle = await open(path, 'r+').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return open(path, 'w+');
        throw error;
      });
      try {
        const { size } = await handle.stat();
        if (size < state.bytes) {
          throw new CheckpointError(`${path} has ${size} bytes, fewer than the ${state.bytes} the checkpoint counts: it was changed outside the export; delete ${outDir} to start over`);
        }
        // records written after the last checkpoint (the run stopped before counting them)
        if (size > state.bytes) await handle.truncate(state.bytes);
        let position = state.bytes;
        if (position === 0) position += (await handle.write(fileHeader(format), 0)).bytesWritten;
        while (state.window < checkpoint!.windows.length) {
          const window = checkpoint!.windows[state.window]!;
          const query = { cooling_unit_id: unitId, ...window, aggregation, page_size: pageSize, page: state.next_page };
          let page;
          try {
            page = await client.sensorData(query, call);
          } catch (error) {
            const untouched = state.window === 0 && state.next_page === 1 && state.records === 0;
            if (!(checkpoint!.units_from !== 'listed' && untouched && error instanceof ColdtrackApiError && error.status === 404)) throw error;
            await unlink(path).catch(() => {});
            state.skipped = `${error.status} ${error.code}: ${error.message}`;
            state.done = true;
            await writer.save();
            options.onNotice?.(`cooling unit ${unitId} skipped: its sensor history is not readable (${state.skipped})`);
            progress();
            return;
          }
          pages++;
          // a record at or before the last one written is never written again
          const fresh = state.last ? page.data.filter((record) => compareKeys(record, state.last!) > 0) : page.data;
          const text = fresh.map((record) => recordLine(record, format)).join('');
          if (text) position += (await handle.write(text, position)).bytesWritten;
          await handle.datasync();
          await options.onPageWritten?.({ unitId, page: state.next_page, records: fresh.length });
          // the records are in the file: now the checkpoint may count them
          const last = fresh.at(-1);
          state.bytes = position;
          state.records += fresh.length;
          if (last) state.last = { timestamp: last.timestamp, specification_type: last.specification_type };
          state.window_totals[state.window] = page.meta.pagination.total_count;
          if (page.meta.pagination.has_next && page.data.length > 0) {
            state.next_page++;
          } else {
            state.window++;
            state.next_page = 1;
          }
          state.done = state.window >= checkpoint!.windows.length;
          await writer.save();
          progress();
        }
        if (!state.done) {
          state.done = true;
          await writer.save();
        }
      } finally {
        await handle.close();
      }
    };

    const queue = [...pending];
    let failure: unknown = null;
    const worker = async () => {
      for (let unitId = queue.shift(); unitId !== undefined && !stop.signal.aborted; unitId = queue.shift()) {
        try {
          await exportUnit(unitId);
        } catch (error) {
          if (!stop.signal.aborted) {
            failure = error instanceof CheckpointError ? error : new ExportUnitError(unitId, error);
            stop.abort(failure);
          }
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, pending.length)) }, worker));
    if (options.signal?.aborted) throw options.signal.reason;
    if (failure) throw failure;
    checkpoint.complete = true;
    await writer.save();
    progress();
    return summary(false);
  } finally {
    options.signal?.removeEventListener('abort', stopOnAbort);
    await unlock();
  }
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
    estimatedTotal: unknown === 0 || average !== null ? Math.max(records, Math.round(known.reduce((a, b) => a + b, 0) + unknown * (average ?? 0))) : null,
    pages,
    unitsDone: units.filter((unit) => unit.done).length,
    unitsTotal: units.length,
  };
}
