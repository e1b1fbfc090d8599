// The export's checkpoint, DIR/export-checkpoint.json: the export's parameters, the units it
// covers (decided once, on the first run) and, per unit, how far its file is written: the window
// and page to fetch next and the file's length after the last page written. A page's records are
// written to the unit's file and synced first, then the checkpoint is replaced atomically
// (written beside it, synced, renamed over it), so after a crash or Ctrl-C the checkpoint never
// counts a page whose records are not in the file; records written after it (a page cut short by
// the crash) are cut off on resume by truncating the file to the length the checkpoint records.
// Nothing of it is trusted on a re-run: checkpoint-check.ts validates it against the parameters and
// the files (each unit's SHA-256 and seal), and every file here is opened as safe-files.ts says.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type Aggregation, type ExportFormat, type RecordKey, unitFileName } from './plan.js';
import { readExistingFile, writeFileAtomically } from './safe-files.js';

export const CHECKPOINT_FILE = 'export-checkpoint.json';
export const CHECKPOINT_TEMPORARY_FILE = `${CHECKPOINT_FILE}.tmp`;
export const LOCK_FILE = 'export.lock';
/** The change feed's cursor beside the checkpoint (changes-cursor.ts), and its leftover of a crash. */
export const CURSOR_FILE = 'export-changes-cursor.json';
export const CURSOR_TEMPORARY_FILE = `${CURSOR_FILE}.tmp`;
/** 2: with each unit's SHA-256 and the seals (1.0's checkpoints, version 1, had neither) */
export const CHECKPOINT_VERSION = 2;

/** What the export is: a re-run must ask for exactly this to continue it. */
export interface ExportIdentity {
  base_url: string;
  from: string;
  to: string;
  aggregation: Aggregation;
  /** "all", or the unit ids asked for */
  units: 'all' | number[];
  format: ExportFormat;
  page_size: number;
}

export interface UnitProgress {
  /** the unit's file name, always unitFileName(id, format): a checkpoint naming another is refused */
  file: string;
  /** index into `windows` of the window being read */
  window: number;
  /** page of that window to fetch next */
  next_page: number;
  /**
   * the next_cursor that page is asked for by (the exact walk); absent on a window's first page,
   * and in checkpoints of services without cursors (then the page number is)
   */
  next_cursor?: string;
  /** the file's length once the pages counted here are written */
  bytes: number;
  records: number;
  /** the last record written, so a page can never add one twice */
  last: RecordKey | null;
  /** total records of each window, once its first page told it (progress and ETA) */
  window_totals: (number | null)[];
  done: boolean;
  /** a found unit the sensor history refused (a retired unit reported by utilization): why */
  skipped?: string;
  /** SHA-256 (hex) of the file's first `bytes` bytes: what a re-run checks the file against */
  sha256: string;
  /** SHA-256 of the fields above and the unit's id (checkpoint-check.ts): an edit of one shows */
  seal: string;
}

/** Where an export by bulk pull stands (bulk-export.ts): the window, and the first day of its next slice. */
export interface BulkProgress {
  window: number;
  /** null: the window's first day */
  start_date: string | null;
  /** SHA-256 of the two above (checkpoint-check.ts) */
  seal: string;
}

export interface Checkpoint {
  version: typeof CHECKPOINT_VERSION;
  export: ExportIdentity;
  windows: { start_date: string; end_date: string }[];
  /** how the unit list was found: "listed", "utilization" or "sensor-data" */
  units_from: string;
  units: Record<string, UnitProgress>;
  /** true once every unit is done (a re-run checks that too) */
  complete: boolean;
  /** an export of every unit by bulk pull: how far it is (absent: by pages, unit by unit) */
  bulk?: BulkProgress;
  updated_at: string;
  /** SHA-256 of the parameters, windows, units_from and unit ids (checkpoint-check.ts) */
  seal: string;
}

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
}

/** The checkpoint's text, if there is one (a link or anything but a regular file is refused). */
export async function readCheckpointText(dir: string): Promise<string | null> {
  return readExistingFile(join(dir, CHECKPOINT_FILE));
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** SHA-256 of nothing: a unit file before its first byte. */
export const EMPTY_SHA256 = sha256('');

export function sealOfExport(checkpoint: Pick<Checkpoint, 'export' | 'windows' | 'units_from' | 'units'>): string {
  const ids = Object.keys(checkpoint.units)
    .map(Number)
    .sort((a, b) => a - b);
  return sha256(JSON.stringify(['export', checkpoint.export, checkpoint.windows, checkpoint.units_from, ids]));
}

export function sealOfUnit(unitId: number, unit: UnitProgress): string {
  const { file, window, next_page, bytes, records, last, window_totals, done, skipped, next_cursor } = unit;
  const fields = [file, window, next_page, bytes, records, last, window_totals, done, skipped ?? null, unit.sha256];
  // sealed only when there is one, so the seals of checkpoints written before cursors still match
  return sha256(JSON.stringify(['unit', unitId, ...fields, ...(next_cursor === undefined ? [] : [next_cursor])]));
}

export const sealOfBulk = (progress: Omit<BulkProgress, 'seal'>) => sha256(JSON.stringify(['bulk', progress.window, progress.start_date]));

/** A unit's entry before anything of it is written. */
export function newUnit(unitId: number, format: ExportFormat, windows: number): UnitProgress {
  return {
    file: unitFileName(unitId, format),
    window: 0,
    next_page: 1,
    bytes: 0,
    records: 0,
    last: null,
    window_totals: Array.from({ length: windows }, () => null),
    done: false,
    sha256: EMPTY_SHA256,
    seal: '', // CheckpointWriter seals what it writes
  };
}

/** Names the first parameter that differs, or null when `b` continues `a`. */
export function identityDifference(a: ExportIdentity, b: ExportIdentity): string | null {
  // both sides' keys: a checkpoint missing a parameter (or with one more) is not this export
  for (const key of new Set([...Object.keys(b), ...Object.keys(a)]) as Set<keyof ExportIdentity>) {
    if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) return `${key} (${JSON.stringify(a[key])} there, ${JSON.stringify(b[key])} now)`;
  }
  return null;
}

/** Saves checkpoints one at a time, each replacing the last atomically. */
export class CheckpointWriter {
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly checkpoint: Checkpoint,
  ) {}

  /** Writes the checkpoint as it is when the write starts (saves queue behind each other). */
  save(): Promise<void> {
    const next = this.chain.then(() => this.write());
    this.chain = next.catch(() => {});
    return next;
  }

  private async write(): Promise<void> {
    const { checkpoint } = this;
    checkpoint.updated_at = new Date().toISOString();
    // sealed as written: a field changed afterwards by anything but the export shows on the next run
    for (const [id, unit] of Object.entries(checkpoint.units)) unit.seal = sealOfUnit(Number(id), unit);
    checkpoint.seal = sealOfExport(checkpoint);
    // the text now, with the seals: units advance while this write waits for the disk
    const text = `${JSON.stringify(checkpoint, null, 1)}\n`;
    // CHECKPOINT_TEMPORARY_FILE is the temporary it writes first
    await writeFileAtomically(this.dir, CHECKPOINT_FILE, text);
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * One export at a time writes DIR: DIR/export.lock holds the writer's pid. A lock left by a
 * process that is gone (killed) is taken over.
 */
export async function lockDirectory(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o644);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => unlink(path).catch(() => {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // a link or anything odd there holds no pid: it is unlinked (the name only) and the lock taken
      const pid = Number(((await readExistingFile(path).catch(() => '')) ?? '').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new CheckpointError(`another export (pid ${pid}) is writing ${dir}; wait for it or stop it first`);
      }
      await unlink(path).catch(() => {});
    }
  }
  throw new CheckpointError(`cannot lock ${dir} (${LOCK_FILE})`);
}
