// Writes one cooling unit's file: from where its checkpoint entry says it stopped, window by
// window and page by page. Each page's new records are appended and synced before the checkpoint
// counts them (checkpoint.ts says why that order makes a crash harmless). The file is the name
// derived from the unit's id, created new or opened without following a link (safe-files.ts), and
// its SHA-256 is kept up to date in the checkpoint, so a re-run can check it (checkpoint-check.ts).
import { createHash, type Hash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ColdtrackApiError } from '../errors.js';
import type { ColdtrackClient } from '../index.js';
import type { CallOptions } from '../transport.js';
import type { DataPage, SensorRecord } from '../types.js';
import { type Checkpoint, CheckpointError, type CheckpointWriter, EMPTY_SHA256, type UnitProgress } from './checkpoint.js';
import type { ExportOptions } from './options.js';
import { compareKeys, type ExportFormat, fileHeader, recordLine, unitFileName } from './plan.js';
import { createNewFile, openExistingFile } from './safe-files.js';

/** What writing a unit's file shares with the rest of the run. */
export interface UnitRun {
  client: ColdtrackClient;
  call: CallOptions;
  options: ExportOptions;
  pageSize: number;
  checkpoint: Checkpoint;
  writer: CheckpointWriter;
  /** the SHA-256 so far of the files a re-run checked (checkpoint-check.ts), by unit id */
  verified: Map<number, Hash>;
  /** a request answered: the run's page count */
  countPage(): void;
  /** tells the caller how far the run is */
  progress(): void;
}

export async function exportUnit(run: UnitRun, unitId: number): Promise<void> {
  const { checkpoint, options } = run;
  const state = checkpoint.units[unitId]!;
  // never a path read from the checkpoint: the name is the unit's id (checked equal on resume)
  const path = join(options.outDir, unitFileName(unitId, options.format));
  const handle = await openUnitFile(path, state);
  const hash = state.bytes > 0 ? run.verified.get(unitId) : createHash('sha256');
  if (!hash) throw new CheckpointError(`cooling unit ${unitId}: its file was not checked before being continued`);
  try {
    let position = await resumePosition(handle, path, state, options, hash);
    while (state.window < checkpoint.windows.length) {
      let page;
      try {
        page = await run.client.sensorData(pageQuery(run, unitId, state), run.call);
      } catch (error) {
        if (!isRetiredUnit(checkpoint, state, error)) throw error;
        await skipRetiredUnit(run, unitId, path, error);
        return;
      }
      run.countPage();
      const fresh = newRecords(page.data, state);
      position = await appendRecords(handle, position, fresh, options.format, hash);
      await options.onPageWritten?.({ unitId, page: state.next_page, records: fresh.length });
      // the records are in the file: now the checkpoint may count them
      advancePastPage(state, page, fresh, position, checkpoint.windows.length);
      state.sha256 = hash.copy().digest('hex');
      await run.writer.save();
      run.progress();
    }
    if (!state.done) {
      state.done = true;
      await run.writer.save();
    }
  } finally {
    await handle.close();
  }
}

/**
 * The unit's file: created new (never an existing name, never through a link) unless the export
 * made it already, which the checkpoint (or the file's bytes beyond what it counts) shows.
 */
async function openUnitFile(path: string, state: UnitProgress): Promise<FileHandle> {
  const existing = await openExistingFile(path);
  if (existing) return existing;
  if (state.bytes > 0) throw new CheckpointError(`${path} disappeared while the export ran`);
  return createNewFile(path);
}

/**
 * Where the next page goes: the file's length the checkpoint counts. Records written after the
 * last checkpoint (the run stopped before counting them) are cut off; a new file gets its header.
 */
async function resumePosition(handle: FileHandle, path: string, state: UnitProgress, options: ExportOptions, hash: Hash): Promise<number> {
  const { size } = await handle.stat();
  if (size < state.bytes) {
    throw new CheckpointError(
      `${path} has ${size} bytes, fewer than the ${state.bytes} the checkpoint counts: it was changed outside the export; delete ${options.outDir} to start over`,
    );
  }
  if (size > state.bytes) await handle.truncate(state.bytes);
  let position = state.bytes;
  if (position === 0) {
    const header = fileHeader(options.format);
    position += (await handle.write(header, 0)).bytesWritten;
    hash.update(header);
  }
  return position;
}

/** The next page of the window: by the cursor the page before gave (the exact walk), else by number. */
function pageQuery(run: UnitRun, unitId: number, state: UnitProgress) {
  const window = run.checkpoint.windows[state.window]!;
  const query = { cooling_unit_id: unitId, ...window, aggregation: run.options.aggregation, page_size: run.pageSize };
  return state.next_cursor === undefined ? { ...query, page: state.next_page } : { ...query, cursor: state.next_cursor };
}

/**
 * A found (not listed) unit whose very first request answers 404: a deleted unit, which
 * utilization still reports on for the days it was live. A listed one that does stops the export.
 */
function isRetiredUnit(checkpoint: Checkpoint, state: UnitProgress, error: unknown): error is ColdtrackApiError {
  const untouched = state.window === 0 && state.next_page === 1 && state.records === 0;
  return checkpoint.units_from !== 'listed' && untouched && error instanceof ColdtrackApiError && error.status === 404;
}

/** No file for a retired unit; the checkpoint says why it has none. */
async function skipRetiredUnit(run: UnitRun, unitId: number, path: string, error: ColdtrackApiError): Promise<void> {
  const state = run.checkpoint.units[unitId]!;
  await unlink(path).catch(() => {});
  state.sha256 = EMPTY_SHA256;
  state.skipped = `${error.status} ${error.code}: ${error.message}`;
  state.done = true;
  await run.writer.save();
  run.options.onNotice?.(`cooling unit ${unitId} skipped: its sensor history is not readable (${state.skipped})`);
  run.progress();
}

/** A record at or before the last one written is never written again. */
function newRecords(records: SensorRecord[], state: UnitProgress): SensorRecord[] {
  return state.last ? records.filter((record) => compareKeys(record, state.last!) > 0) : records;
}

/** Appends the records at `position` and syncs the file; returns the new end. */
async function appendRecords(
  handle: FileHandle,
  position: number,
  records: SensorRecord[],
  format: ExportFormat,
  hash: Hash,
): Promise<number> {
  const text = records.map((record) => recordLine(record, format)).join('');
  hash.update(text);
  let end = position;
  if (text) end += (await handle.write(text, position)).bytesWritten;
  await handle.datasync();
  return end;
}

/** The unit's checkpoint entry after a page's records reached the file: where the next page is. */
function advancePastPage(
  state: UnitProgress,
  page: DataPage<'sensorData'>,
  fresh: SensorRecord[],
  position: number,
  windows: number,
): void {
  const last = fresh.at(-1);
  state.bytes = position;
  state.records += fresh.length;
  if (last) state.last = { timestamp: last.timestamp, specification_type: last.specification_type };
  const { total_count: total, has_next: hasNext, next_cursor: cursor } = page.meta.pagination;
  state.window_totals[state.window] = total;
  delete state.next_cursor;
  if (hasNext && page.data.length > 0) {
    state.next_page++;
    // a service without cursors (null is the last page's, never beside has_next) leaves page numbers
    if (typeof cursor === 'string') state.next_cursor = cursor;
  } else {
    state.window++;
    state.next_page = 1;
  }
  state.done = state.window >= windows;
}
