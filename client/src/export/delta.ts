// `coldtrack-export --since-last`: brings a complete export's copy up to date with the change
// feed. From the cursor stored beside the checkpoint (changes-cursor.ts), the changed spans of the
// exported units (GET /api/v1/sensor-data/changes); for each, the records they alter, read again
// with their new values through GET /api/v1/sensor-data: the raw readings inside the span, and the
// hourly and daily buckets it touches. They go to three delta files, numbered in the order the
// deltas were made, each record keyed for a warehouse upsert:
//   delta-<n>-raw.<format>     key (cooling_unit_id, specification_type, timestamp)
//   delta-<n>-hourly.<format>  key (cooling_unit_id, specification_type, resolution, timestamp)
//   delta-<n>-daily.<format>   the same key; resolution is "hourly" or "daily", timestamp the bucket's start
// The new cursor is stored only once the three files are on disk: a run that stops before that
// writes delta <n> again from the same cursor (applying a delta twice changes nothing). No change
// since the last run: no file, only the cursor moved on (so it does not run past the service's
// retention while nothing changes).
import { join } from 'node:path';
import type { ColdtrackClient } from '../index.js';
import type { CallOptions } from '../transport.js';
import type { SensorChange, SensorRecord } from '../types.js';
import { type Checkpoint, CheckpointError, lockDirectory, readCheckpointText, CHECKPOINT_FILE } from './checkpoint.js';
import { parseCheckpoint } from './checkpoint-check.js';
import { checkDirectory } from './directory.js';
import { ChangesCursorError, readChangesCursor, saveChangesCursor } from './changes-cursor.js';
import { writeFileAtomically } from './safe-files.js';
import { type ExportFormat, MAX_WINDOW_DAYS, formatDay, parseDay, windowsOf } from './plan.js';

export const DELTA_KINDS = ['raw', 'hourly', 'daily'] as const;
export type DeltaKind = (typeof DELTA_KINDS)[number];

export const deltaFileName = (delta: number, kind: DeltaKind, format: ExportFormat) =>
  `delta-${String(delta).padStart(6, '0')}-${kind}.${format}`;

export const RAW_DELTA_COLUMNS = ['cooling_unit_id', 'specification_type', 'timestamp', 'value'] as const;
export const BUCKET_DELTA_COLUMNS = [
  'cooling_unit_id',
  'specification_type',
  'resolution',
  'timestamp',
  'value',
  'min',
  'max',
  'sample_count',
] as const;

export interface DeltaOptions {
  /** the export's service: must be the one its checkpoint and cursor name */
  baseUrl: string;
  outDir: string;
  /** records per request, 1..1000; default 1000 */
  pageSize?: number;
  signal?: AbortSignal;
  onNotice?: (line: string) => void;
}

export interface DeltaSummary {
  /** the delta's number, or null when nothing changed (no file written) */
  delta: number | null;
  /** changed spans of the exported units */
  changes: number;
  records: Record<DeltaKind, number>;
  files: string[];
}

const DAY_MS = 86_400_000;

export async function exportChangesSinceLast(client: ColdtrackClient, options: DeltaOptions): Promise<DeltaSummary> {
  const unlock = await lockDirectory(options.outDir);
  try {
    const { format, units, state } = await exportInDirectory(options);
    const call: CallOptions = { signal: options.signal };
    const { changes, cursor } = await changesSince(client, state.cursor, units, options.pageSize ?? 1000, call);
    const records: Record<DeltaKind, number> = { raw: 0, hourly: 0, daily: 0 };
    if (changes.length === 0) {
      await saveChangesCursor(options.outDir, { base_url: state.base_url, cursor, deltas: state.deltas });
      return { delta: null, changes: 0, records, files: [] };
    }
    const delta = state.deltas + 1;
    options.onNotice?.(`${changes.length} changed spans since the last run: reading their records (delta ${delta})`);
    const lines: Record<DeltaKind, string[]> = { raw: [], hourly: [], daily: [] };
    for (const [unitId, spans] of byUnit(changes)) {
      for (const kind of DELTA_KINDS) {
        for (const record of await changedRecords(client, unitId, spans, kind, options.pageSize ?? 1000, call)) {
          lines[kind].push(deltaLine(record, kind, format));
        }
      }
    }
    const files: string[] = [];
    for (const kind of DELTA_KINDS) {
      const name = deltaFileName(delta, kind, format);
      const header = format === 'csv' ? `${(kind === 'raw' ? RAW_DELTA_COLUMNS : BUCKET_DELTA_COLUMNS).join(',')}\n` : '';
      await writeFileAtomically(options.outDir, name, header + lines[kind].join(''));
      records[kind] = lines[kind].length;
      files.push(name);
    }
    // the files are on disk: only now does the cursor move past these changes
    await saveChangesCursor(options.outDir, { base_url: state.base_url, cursor, deltas: delta });
    return { delta, changes: changes.length, records, files };
  } finally {
    await unlock();
  }
}

/** The complete export in the directory, and its cursor; refuses anything else with the reason. */
async function exportInDirectory(options: DeltaOptions) {
  const text = await readCheckpointText(options.outDir);
  if (text === null) throw new CheckpointError(`no export in ${options.outDir}: export the history first, then use --since-last`);
  const checkpoint = parseOwnCheckpoint(text, options.outDir);
  if (!checkpoint.complete || Object.values(checkpoint.units).some((unit) => !unit.done && unit.skipped === undefined)) {
    throw new CheckpointError(`the export in ${options.outDir} is not complete: run its command again to finish it first`);
  }
  if (checkpoint.export.base_url !== options.baseUrl) {
    throw new CheckpointError(`the export in ${options.outDir} is of ${checkpoint.export.base_url}, not ${options.baseUrl}`);
  }
  const state = await readChangesCursor(options.outDir);
  if (!state) {
    throw new ChangesCursorError(
      `${options.outDir} holds no change-feed cursor (an export made before --since-last existed): export again into a new folder`,
    );
  }
  if (state.base_url !== options.baseUrl) throw new ChangesCursorError(`the cursor in ${options.outDir} is of ${state.base_url}`);
  // nothing is read or written in a folder holding what the export did not write
  await checkDirectory(options.outDir, checkpoint, checkpoint.export.format, state.deltas);
  const units = checkpoint.export.units === 'all' ? null : new Set(checkpoint.export.units);
  return { format: checkpoint.export.format, units, state };
}

/** The checkpoint in DIR checked against itself (its seal, windows and unit files): --since-last names no parameters. */
function parseOwnCheckpoint(text: string, outDir: string): Checkpoint {
  const path = join(outDir, CHECKPOINT_FILE);
  let identity: unknown;
  try {
    identity = (JSON.parse(text) as { export?: unknown }).export;
  } catch {
    identity = null;
  }
  if (identity === null || typeof identity !== 'object') throw new CheckpointError(`${path} is not a checkpoint of this exporter`);
  try {
    return parseCheckpoint(text, identity as Checkpoint['export'], path);
  } catch (error) {
    if (error instanceof CheckpointError) throw error;
    throw new CheckpointError(`${path} cannot be used: ${(error as Error).message}`);
  }
}

/** Every change after `since` of the exported units, and the cursor after them. */
async function changesSince(client: ColdtrackClient, since: string, units: Set<number> | null, pageSize: number, call: CallOptions) {
  const changes: SensorChange[] = [];
  let cursor = since;
  for (;;) {
    const page = await client.sensorDataChanges({ since: cursor, page_size: pageSize }, call);
    changes.push(...page.data.filter((change) => units === null || units.has(change.cooling_unit_id)));
    cursor = page.meta.pagination.next_cursor;
    if (!page.meta.pagination.has_next) return { changes, cursor };
  }
}

function byUnit(changes: SensorChange[]): Map<number, SensorChange[]> {
  const units = new Map<number, SensorChange[]>();
  for (const change of changes) {
    const spans = units.get(change.cooling_unit_id) ?? [];
    spans.push(change);
    units.set(change.cooling_unit_id, spans);
  }
  return new Map([...units].sort(([a], [b]) => a - b));
}

/** An instant as text that sorts as the instant does: six fractional digits always. */
const sortable = (timestamp: string) => (timestamp.includes('.') ? timestamp : timestamp.replace('Z', '.000000Z'));

/** Whether a record of `kind` is one the span alters: a reading inside it, or a bucket it touches. */
function altered(record: SensorRecord, span: SensorChange, kind: DeltaKind): boolean {
  if (record.specification_type !== span.specification_type) return false;
  if (kind === 'raw') {
    const at = sortable(record.timestamp);
    return at >= sortable(span.from) && at <= sortable(span.to);
  }
  const width = kind === 'hourly' ? 13 : 10; // YYYY-MM-DDTHH, YYYY-MM-DD
  const bucket = record.timestamp.slice(0, width);
  return bucket >= span.from.slice(0, width) && bucket <= span.to.slice(0, width);
}

/** The unit's days the spans touch, as the fewest windows the service accepts. */
function dayWindows(spans: SensorChange[], kind: DeltaKind) {
  const ranges = spans
    .map((span) => [parseDay(span.from.slice(0, 10))!, parseDay(span.to.slice(0, 10))!] as const)
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [first, last] of ranges) {
    const previous = merged.at(-1);
    if (previous && first <= previous[1] + DAY_MS) previous[1] = Math.max(previous[1], last);
    else merged.push([first, last]);
  }
  return merged.flatMap(([first, last]) => windowsOf(formatDay(first), formatDay(last), MAX_WINDOW_DAYS[kind]));
}

async function changedRecords(
  client: ColdtrackClient,
  unitId: number,
  spans: SensorChange[],
  kind: DeltaKind,
  pageSize: number,
  call: CallOptions,
): Promise<SensorRecord[]> {
  const types = [...new Set(spans.map((span) => span.specification_type))].sort();
  const records: SensorRecord[] = [];
  for (const window of dayWindows(spans, kind)) {
    const query = { cooling_unit_id: unitId, ...window, aggregation: kind, specification_type: types, page_size: pageSize };
    for await (const record of client.paginate('sensorData', query, call)) {
      if (spans.some((span) => altered(record, span, kind))) records.push(record);
    }
  }
  return records;
}

/** One record of a delta file: the key's columns first. */
function deltaLine(record: SensorRecord, kind: DeltaKind, format: ExportFormat): string {
  const row =
    kind === 'raw'
      ? {
          cooling_unit_id: record.cooling_unit_id,
          specification_type: record.specification_type,
          timestamp: record.timestamp,
          value: record.value,
        }
      : {
          cooling_unit_id: record.cooling_unit_id,
          specification_type: record.specification_type,
          resolution: kind,
          timestamp: record.timestamp,
          value: record.value,
          min: record.min,
          max: record.max,
          sample_count: record.sample_count,
        };
  if (format === 'ndjson') return `${JSON.stringify(row)}\n`;
  return `${Object.values(row)
    .map((value) => (value === undefined ? '' : String(value)))
    .join(',')}\n`;
}
