// A checkpoint found in DIR is checked before the export trusts any of it. It must be this
// exporter's JSON (else CheckpointError), of the same parameters (else ExportConflictError,
// naming the difference), and consistent with them and with itself (else ExportDirectoryError):
// the windows are those of --from/--to, listed units are the ones asked for, each unit's file is
// the name derived from its id, and the seals match. Each unit's file is then checked against its
// entry (verifyUnitFile): its first `bytes` bytes have the SHA-256 recorded, end with a whole line,
// hold `records` records, the last of them `last`. A unit that fails is exported again from the
// start; a file is never continued from a position the checkpoint cannot vouch for.
// The seals are SHA-256 of the fields they cover, not a signature: they catch a checkpoint edited
// by hand or by another tool (a changed page, window, length, `done`), not a forger who recomputes
// them, which is why DIR must be a folder only its owner writes.
import { createHash, type Hash } from 'node:crypto';
import { join } from 'node:path';
import {
  type BulkProgress,
  type Checkpoint,
  CHECKPOINT_VERSION,
  CheckpointError,
  type ExportIdentity,
  identityDifference,
  newUnit,
  sealOfBulk,
  sealOfExport,
  sealOfUnit,
  type UnitProgress,
} from './checkpoint.js';
import { type ExportFormat, fileHeader, MAX_WINDOW_DAYS, unitFileName, windowsOf } from './plan.js';
import type { ExportOptions } from './options.js';
import { ExportDirectoryError, openExistingFile } from './safe-files.js';

const isWhole = (value: unknown, min = 0): value is number => Number.isSafeInteger(value) && (value as number) >= min;
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Why a unit entry is not of the shape the exporter writes, or null. */
function unitShapeProblem(unit: unknown, windows: number): string | null {
  if (!isObject(unit)) return 'not an object';
  if (typeof unit.file !== 'string') return 'no file';
  if (!isWhole(unit.window) || unit.window > windows) return `window ${JSON.stringify(unit.window)}`;
  if (!isWhole(unit.next_page, 1)) return `next_page ${JSON.stringify(unit.next_page)}`;
  if (unit.next_cursor !== undefined && typeof unit.next_cursor !== 'string') return 'next_cursor';
  if (!isWhole(unit.bytes) || !isWhole(unit.records)) return 'bytes or records not whole numbers';
  const last = unit.last;
  if (last !== null && !(isObject(last) && typeof last.timestamp === 'string' && typeof last.specification_type === 'string'))
    return 'last';
  if (
    !Array.isArray(unit.window_totals) ||
    unit.window_totals.length !== windows ||
    unit.window_totals.some((n) => n !== null && !isWhole(n))
  )
    return 'window_totals';
  if (typeof unit.done !== 'boolean' || (unit.skipped !== undefined && typeof unit.skipped !== 'string')) return 'done or skipped';
  if (typeof unit.sha256 !== 'string' || typeof unit.seal !== 'string') return 'no sha256 or seal';
  return null;
}

/**
 * The checkpoint's text as this export's checkpoint, or the reason it is not one. `identity` is
 * what this run asks for; `path` names the file in messages.
 */
export function parseCheckpoint(text: string, identity: ExportIdentity, path: string): Checkpoint {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(`${path} is not a checkpoint of this exporter (${(error as Error).message})`);
  }
  if (!isObject(value) || !isObject(value.export) || !isObject(value.units))
    throw new CheckpointError(`${path} is not a checkpoint of this exporter`);
  if (value.version === 1)
    throw new CheckpointError(
      `${path} was written by coldtrack-export 1.0, whose files cannot be checked; delete it and the files to start over`,
    );
  if (value.version !== CHECKPOINT_VERSION) throw new CheckpointError(`${path} is not a checkpoint of this exporter (unknown version)`);
  const changed = (why: string) =>
    new ExportDirectoryError(`${path} was changed outside the export (${why}); delete the folder's files to start over`);
  // the parameters first: another export is named as such, not as damage
  const difference = identityDifference(value.export as unknown as ExportIdentity, identity);
  if (difference) throw new DifferentExportError(difference);

  const windows = windowsOf(identity.from, identity.to, MAX_WINDOW_DAYS[identity.aggregation]);
  if (JSON.stringify(value.windows) !== JSON.stringify(windows)) throw changed('its windows are not those of --from and --to');
  for (const [key, unit] of Object.entries(value.units)) {
    if (!/^[1-9]\d{0,9}$/.test(key)) throw changed(`unit ${JSON.stringify(key)} is not a unit id`);
    const problem = unitShapeProblem(unit, windows.length);
    if (problem) throw changed(`unit ${key}: ${problem}`);
    const expected = unitFileName(Number(key), identity.format);
    if ((unit as UnitProgress).file !== expected)
      throw changed(`unit ${key} names the file ${JSON.stringify((unit as UnitProgress).file)}, not ${expected}`);
  }
  const checkpoint = value as unknown as Checkpoint;
  if (typeof checkpoint.units_from !== 'string' || typeof checkpoint.complete !== 'boolean') throw changed('units_from or complete');
  if (identity.units !== 'all') {
    const ids = Object.keys(checkpoint.units)
      .map(Number)
      .sort((a, b) => a - b);
    if (JSON.stringify(ids) !== JSON.stringify(identity.units)) throw changed(`its units ${ids.join(',')} are not those asked for`);
  }
  if (checkpoint.seal !== sealOfExport(checkpoint)) throw changed('its parameters, windows or units do not match its seal');
  const bulk = checkpoint.bulk as unknown;
  if (bulk !== undefined) {
    const valid =
      isObject(bulk) &&
      isWhole(bulk.window) &&
      (bulk.window as number) <= windows.length &&
      (bulk.start_date === null || (typeof bulk.start_date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(bulk.start_date))) &&
      bulk.seal === sealOfBulk(bulk as unknown as BulkProgress);
    if (!valid) throw changed('its bulk progress does not match its seal');
  }
  return checkpoint;
}

/** Thrown by parseCheckpoint when the checkpoint is another export's: which parameter differs. */
export class DifferentExportError extends Error {
  constructor(readonly difference: string) {
    super(difference);
  }
}

export interface VerifiedFile {
  /** SHA-256 of the file's first `bytes` bytes so far: the file continues from there */
  hash: Hash;
}

/**
 * Checks a unit's file against its entry; returns the running hash of its counted bytes, or why
 * the file cannot be continued (then it is exported again from the start).
 */
export async function verifyUnitFile(
  dir: string,
  unitId: number,
  unit: UnitProgress,
  format: ExportFormat,
): Promise<VerifiedFile | string> {
  if (unit.seal !== sealOfUnit(unitId, unit)) return 'its checkpoint entry does not match its seal';
  const handle = await openExistingFile(join(dir, unitFileName(unitId, format)), 'r');
  if (!handle) {
    if (unit.skipped !== undefined || unit.bytes === 0) return { hash: createHash('sha256') };
    return 'its file is missing';
  }
  try {
    if (unit.skipped !== undefined) return 'a skipped unit has a file';
    const { size } = await handle.stat();
    if (size < unit.bytes) return `its file has ${size} bytes, fewer than the ${unit.bytes} counted`;
    const hash = createHash('sha256');
    const buffer = Buffer.alloc(1 << 16);
    let lines = 0;
    /** the file's last line so far (maybe not yet whole) */
    let tail = Buffer.alloc(0);
    for (let position = 0; position < unit.bytes;) {
      const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, unit.bytes - position), position);
      if (bytesRead === 0) return 'its file ended early';
      const chunk = buffer.subarray(0, bytesRead);
      hash.update(chunk);
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      tail = Buffer.concat([tail, chunk]);
      const cut = tail.length >= 2 ? tail.lastIndexOf(10, tail.length - 2) : -1;
      if (cut >= 0) tail = tail.subarray(cut + 1);
      position += bytesRead;
    }
    if (hash.copy().digest('hex') !== unit.sha256) return 'its content does not match the SHA-256 counted';
    const header = format === 'csv' && unit.bytes > 0 ? 1 : 0;
    if (lines - header !== unit.records) return `its file holds ${lines - header} records, not the ${unit.records} counted`;
    if (unit.bytes > 0 && tail.at(-1) !== 10) return 'its counted bytes end in the middle of a line';
    if (!sameKey(tail.subarray(0, -1).toString('utf8'), unit, format, unitId)) return 'its last line is not the last record counted';
    return { hash };
  } finally {
    await handle.close();
  }
}

/** The file's last line is the record `unit.last` (or, with none, the header or nothing). */
function sameKey(text: string, unit: UnitProgress, format: ExportFormat, unitId: number): boolean {
  if (unit.last === null) return unit.bytes === 0 || `${text}\n` === fileHeader(format);
  let key: { timestamp?: unknown; cooling_unit_id?: unknown; specification_type?: unknown };
  if (format === 'ndjson') {
    try {
      key = JSON.parse(text) as typeof key;
    } catch {
      return false;
    }
  } else {
    const [timestamp, unitText, type] = text.split(',');
    key = { timestamp, cooling_unit_id: Number(unitText), specification_type: type };
  }
  return key.timestamp === unit.last.timestamp && key.specification_type === unit.last.specification_type && key.cooling_unit_id === unitId;
}

/**
 * Every unit's file checked against its checkpoint entry (done ones too: a complete export is
 * checked before it is called complete). A unit that does not match starts again from nothing;
 * the others continue with the hash of what their files hold.
 */
export async function verifyUnits(
  checkpoint: Checkpoint,
  options: Pick<ExportOptions, 'outDir' | 'format' | 'onNotice'>,
): Promise<{ verified: Map<number, Hash>; changed: boolean }> {
  const verified = new Map<number, Hash>();
  let changed = false;
  const windows = checkpoint.windows.length;
  for (const unitId of Object.keys(checkpoint.units)
    .map(Number)
    .sort((a, b) => a - b)) {
    const result = await verifyUnitFile(options.outDir, unitId, checkpoint.units[unitId]!, options.format);
    if (typeof result !== 'string') {
      verified.set(unitId, result.hash);
      continue;
    }
    checkpoint.units[unitId] = newUnit(unitId, options.format, windows);
    changed = true;
    options.onNotice?.(`cooling unit ${unitId}: ${result}; exporting it again from the start`);
  }
  const allDone = Object.values(checkpoint.units).every((unit) => unit.done || unit.skipped !== undefined);
  if (checkpoint.complete && !allDone) options.onNotice?.('the checkpoint said complete, but not every unit is: continuing');
  changed ||= checkpoint.complete && !allDone;
  checkpoint.complete &&= allDone;
  return { verified, changed };
}
