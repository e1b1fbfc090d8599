// An export of every unit (units "all") by bulk pull (GET /api/v1/sensor-data/bulk) instead of
// pages: each window is read a slice of whole days at a time, each slice's records split by unit
// and appended to the units' files, then the checkpoint counts them and names the next slice
// (checkpoint.bulk). The files and their checkpoint entries are those of the paged export, written
// alike (recordLine): a re-run, a check and --since-last treat both the same. A slice that breaks
// off is asked for again; a crash between a slice's files and its checkpoint leaves bytes past
// what the checkpoint counts, which the next run cuts off before it reads that slice again. A
// service without bulk pulls (404) leaves the export to pages, before anything is written.
import { createHash, type Hash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ColdtrackApiError } from '../errors.js';
import type { ColdtrackClient } from '../index.js';
import type { CallOptions } from '../transport.js';
import type { SensorBulkQuery, SensorRecord } from '../types.js';
import {
  type BulkProgress,
  type Checkpoint,
  CheckpointError,
  type CheckpointWriter,
  EMPTY_SHA256,
  newUnit,
  sealOfBulk,
} from './checkpoint.js';
import type { ExportOptions } from './options.js';
import { compareKeys, fileHeader, recordLine, unitFileName } from './plan.js';
import { createNewFile, openExistingFile } from './safe-files.js';

/** Records a slice holds at most (whole days, the first always): a few tens of MB of lines in memory. */
export const BULK_SLICE_RECORDS = 500_000;
/** Times a slice that broke off is asked for again before the export stops. */
const SLICE_ATTEMPTS = 3;
/** Unit files written (and synced) at once after a slice. */
const FILES_AT_ONCE = 16;

export interface BulkRun {
  client: ColdtrackClient;
  call: CallOptions;
  options: ExportOptions;
  checkpoint: Checkpoint;
  writer: CheckpointWriter;
  /** the SHA-256 so far of the files a re-run checked, by unit id */
  verified: Map<number, Hash>;
  countPage(): void;
  progress(): void;
}

export function newBulkProgress(): BulkProgress {
  const progress = { window: 0, start_date: null, seal: '' };
  return { ...progress, seal: sealOfBulk(progress) };
}

/**
 * Exports every unit's files by bulk pull from where checkpoint.bulk says; false (nothing written)
 * when the service has no bulk pulls, for the caller to export by pages instead.
 */
export async function exportInBulk(run: BulkRun): Promise<boolean> {
  const { checkpoint, options } = run;
  const progress = checkpoint.bulk!;
  const hashes = new Map<number, Hash>();
  for (const [id, state] of Object.entries(checkpoint.units)) {
    const hash = state.bytes > 0 ? run.verified.get(Number(id)) : createHash('sha256');
    if (!hash) throw new CheckpointError(`cooling unit ${id}: its file was not checked before being continued`);
    hashes.set(Number(id), hash);
  }
  while (progress.window < checkpoint.windows.length) {
    const window = checkpoint.windows[progress.window]!;
    const query: SensorBulkQuery = {
      ...window,
      start_date: progress.start_date ?? window.start_date,
      aggregation: options.aggregation,
      format: 'csv',
      max_records: options.sliceRecords ?? BULK_SLICE_RECORDS,
    };
    let slice;
    try {
      slice = await readSlice(run, query, hashes);
    } catch (error) {
      const untouched = progress.window === 0 && progress.start_date === null;
      if (untouched && error instanceof ColdtrackApiError && error.status === 404 && error.code === 'not_found') return false;
      throw error;
    }
    run.countPage();
    await writeSlice(run, slice.lines, hashes);
    await options.onPageWritten?.({ unitId: 0, page: progress.window + 1, records: slice.records });
    if (slice.next?.start_date) progress.start_date = slice.next.start_date;
    else {
      progress.window++;
      progress.start_date = null;
    }
    progress.seal = sealOfBulk(progress);
    for (const state of Object.values(checkpoint.units)) {
      state.window = progress.window;
      state.done = progress.window >= checkpoint.windows.length;
    }
    await run.writer.save();
    run.progress();
  }
  await skipUnreadableUnits(run);
  return true;
}

/**
 * A found unit without a record may be one the token cannot read (a deleted unit, which
 * utilization still reports on): one request tells, and such a unit is skipped as the paged
 * export skips it, its empty file removed.
 */
async function skipUnreadableUnits(run: BulkRun) {
  const { checkpoint, options } = run;
  if (checkpoint.units_from === 'listed') return;
  for (const [id, state] of Object.entries(checkpoint.units)) {
    if (state.records > 0 || state.skipped !== undefined) continue;
    try {
      await run.client.sensorData({ cooling_unit_id: Number(id), ...checkpoint.windows[0]!, page_size: 1 }, run.call);
      run.countPage();
    } catch (error) {
      if (!(error instanceof ColdtrackApiError && error.status === 404)) throw error;
      await unlink(join(options.outDir, unitFileName(Number(id), options.format))).catch(() => {});
      Object.assign(state, { bytes: 0, last: null, sha256: EMPTY_SHA256, skipped: `${error.status} ${error.code}: ${error.message}` });
      await run.writer.save();
      options.onNotice?.(`cooling unit ${id} skipped: its sensor history is not readable (${state.skipped})`);
    }
  }
}

interface Slice {
  /** each unit's new lines, as its file writes them */
  lines: Map<number, string[]>;
  records: number;
  next: SensorBulkQuery | null;
}

/** A slice read to its end (asked for again when it breaks off), its records split by unit. */
async function readSlice(run: BulkRun, query: SensorBulkQuery, hashes: Map<number, Hash>): Promise<Slice> {
  for (let attempt = 1; ; attempt++) {
    const { body, next } = await run.client.sensorDataBulk(query, run.call);
    try {
      return { ...(await splitByUnit(run, body, hashes)), next };
    } catch (error) {
      if (run.call.signal?.aborted || attempt >= SLICE_ATTEMPTS) throw error;
      run.options.onNotice?.(`a slice from ${String(query.start_date)} broke off (${(error as Error).message}); asking for it again`);
    }
  }
}

async function splitByUnit(run: BulkRun, body: ReadableStream<Uint8Array>, hashes: Map<number, Hash>) {
  const { checkpoint, options } = run;
  const lines = new Map<number, string[]>();
  let records = 0;
  let unknown = 0;
  let header = true;
  let rest = '';
  // units whose file may hold some of this slice's first records (a slice read again after a crash)
  const catchingUp = new Set(
    Object.keys(checkpoint.units)
      .filter((id) => checkpoint.units[id]!.last !== null)
      .map(Number),
  );
  const take = (line: string) => {
    if (header) {
      header = false;
      return;
    }
    const unitId = Number(line.slice(line.indexOf(',') + 1, line.indexOf(',', line.indexOf(',') + 1)));
    let state = checkpoint.units[unitId];
    if (!state) {
      if (checkpoint.units_from !== 'bulk') {
        unknown++;
        return;
      }
      // units as the pull names them: a new one gets its entry (and file) here
      state = checkpoint.units[unitId] = newUnit(unitId, options.format, checkpoint.windows.length);
      hashes.set(unitId, createHash('sha256'));
    }
    let unitLines = lines.get(unitId);
    // the line as the service wrote it is the file's line when numbers read alike (no exponent and
    // no -0, which float8out writes where JavaScript does not), and the file's first records are past
    const alike = !line.includes('e') && !line.includes('-0,') && !line.endsWith(',-0');
    if (options.format === 'csv' && alike && !catchingUp.has(unitId)) {
      if (!unitLines) lines.set(unitId, (unitLines = []));
      unitLines.push(`${line}\n`);
      records++;
      return;
    }
    const [timestamp = '', , type = '', value = '', samples = '', min = '', max = ''] = line.split(',');
    const record = {
      timestamp,
      cooling_unit_id: unitId,
      specification_type: type,
      value: Number(value),
      sample_count: Number(samples),
      ...(min === '' ? {} : { min: Number(min), max: Number(max) }),
    } as SensorRecord;
    // never a record at or before the last one the file holds
    if (state.last && catchingUp.has(unitId)) {
      if (compareKeys(record, state.last) <= 0) return;
      catchingUp.delete(unitId);
    }
    if (!unitLines) lines.set(unitId, (unitLines = []));
    unitLines.push(recordLine(record, options.format));
    records++;
  };
  const decoder = new TextDecoder();
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = parts.pop()!;
    for (const part of parts) take(part);
  }
  rest += decoder.decode();
  if (rest) take(rest);
  if (unknown > 0) options.onNotice?.(`${unknown} records of units found after the export began were left out`);
  return { lines, records };
}

/** Appends each unit's lines to its file (a new one gets its header), synced, then counts them in its entry. */
async function writeSlice(run: BulkRun, lines: Map<number, string[]>, hashes: Map<number, Hash>) {
  const { checkpoint, options } = run;
  const queue = [...lines.keys()].sort((a, b) => a - b);
  const writeOne = async (unitId: number) => {
    const state = checkpoint.units[unitId]!;
    const path = join(options.outDir, unitFileName(unitId, options.format));
    const handle = (await openExistingFile(path)) ?? (state.bytes === 0 ? await createNewFile(path) : null);
    if (!handle) throw new CheckpointError(`${path} disappeared while the export ran`);
    try {
      const { size } = await handle.stat();
      if (size < state.bytes)
        throw new CheckpointError(`${path} has fewer bytes than the checkpoint counts: it was changed outside the export`);
      // bytes past the count: a slice written before a crash, read again now
      if (size > state.bytes) await handle.truncate(state.bytes);
      const hash = hashes.get(unitId)!;
      const text = (state.bytes === 0 ? fileHeader(options.format) : '') + lines.get(unitId)!.join('');
      hash.update(text);
      const { bytesWritten } = await handle.write(text, state.bytes);
      await handle.datasync();
      const unitLines = lines.get(unitId)!;
      const last = unitLines.at(-1)!;
      state.bytes += bytesWritten;
      state.records += unitLines.length;
      state.last = keyOfLine(last, options.format);
      state.sha256 = hash.copy().digest('hex');
    } finally {
      await handle.close();
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(FILES_AT_ONCE, queue.length) }, async () => {
      for (let unitId = queue.shift(); unitId !== undefined; unitId = queue.shift()) await writeOne(unitId);
    }),
  );
}

function keyOfLine(line: string, format: ExportOptions['format']) {
  if (format === 'ndjson') {
    const record = JSON.parse(line) as SensorRecord;
    return { timestamp: record.timestamp, specification_type: record.specification_type };
  }
  const [timestamp = '', , type = ''] = line.split(',');
  return { timestamp, specification_type: type as SensorRecord['specification_type'] };
}
