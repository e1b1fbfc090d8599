// The export's checkpoint, DIR/export-checkpoint.json: the export's parameters, the units it
// covers (decided once, on the first run) and, per unit, how far its file is written: the window
// and page to fetch next and the file's length after the last page written. A page's records are
// written to the unit's file and synced first, then the checkpoint is replaced atomically
// (written beside it, synced, renamed over it), so after a crash or Ctrl-C the checkpoint never
// counts a page whose records are not in the file; records written after it (a page cut short by
// the crash) are cut off on resume by truncating the file to the length the checkpoint records.
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Aggregation, ExportFormat, RecordKey } from './plan.js';

export const CHECKPOINT_FILE = 'export-checkpoint.json';
export const LOCK_FILE = 'export.lock';

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
  file: string;
  /** index into `windows` of the window being read */
  window: number;
  /** page of that window to fetch next */
  next_page: number;
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
}

export interface Checkpoint {
  version: 1;
  export: ExportIdentity;
  windows: { start_date: string; end_date: string }[];
  /** how the unit list was found: "listed", "utilization" or "sensor-data" */
  units_from: string;
  units: Record<string, UnitProgress>;
  complete: boolean;
  updated_at: string;
}

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
}

export async function readCheckpoint(dir: string): Promise<Checkpoint | null> {
  let text: string;
  try {
    text = await readFile(join(dir, CHECKPOINT_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const checkpoint = JSON.parse(text) as Checkpoint;
    if (checkpoint.version !== 1 || typeof checkpoint.units !== 'object') throw new Error('unknown version');
    return checkpoint;
  } catch (error) {
    throw new CheckpointError(`${join(dir, CHECKPOINT_FILE)} is not a checkpoint of this exporter (${(error as Error).message})`);
  }
}

/** Names the first parameter that differs, or null when `b` continues `a`. */
export function identityDifference(a: ExportIdentity, b: ExportIdentity): string | null {
  for (const key of Object.keys(a) as (keyof ExportIdentity)[]) {
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
    this.checkpoint.updated_at = new Date().toISOString();
    const path = join(this.dir, CHECKPOINT_FILE);
    const temporary = `${path}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(this.checkpoint, null, 1)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    // the rename itself survives a power cut once the directory is synced
    const directory = await open(this.dir, 'r');
    try {
      await directory.sync();
    } catch {
      // some file systems refuse fsync on a directory; the rename is still atomic
    } finally {
      await directory.close();
    }
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
      const handle = await open(path, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return () => unlink(path).catch(() => {});
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new CheckpointError(`another export (pid ${pid}) is writing ${dir}; wait for it or stop it first`);
      }
      await unlink(path).catch(() => {});
    }
  }
  throw new CheckpointError(`cannot lock ${dir} (${LOCK_FILE})`);
}
