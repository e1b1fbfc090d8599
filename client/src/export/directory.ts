// What the export accepts to find in DIR before it writes there. It writes only its own files, so
// a folder holding anything else is refused (exit 2), before a byte is written:
// - anything that is not a regular file with a single name: a symbolic link (even one named like
//   a file of the export), a directory, a FIFO, a device, a file with another hard link;
// - any file but export-checkpoint.json, export-checkpoint.json.tmp (a crash's leftover),
//   export.lock and the unit files the checkpoint names (cooling-unit-<id>.<format> of its units,
//   a skipped unit having none); without a checkpoint, no unit file at all.
// - beside them, the change feed's cursor (export-changes-cursor.json and its .tmp) and the delta
//   files `--since-last` wrote (delta-<n>-raw|hourly|daily.<format>, n up to the cursor's count,
//   and the .tmp of the one being written).
// An empty folder, or one that does not exist yet, is fine. Files of other kinds the export
// writes beside these (a later feature's) are added to OWN_FILES.
import { lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Checkpoint,
  CHECKPOINT_FILE,
  CHECKPOINT_TEMPORARY_FILE,
  CURSOR_FILE,
  CURSOR_TEMPORARY_FILE,
  LOCK_FILE,
} from './checkpoint.js';
import { type ExportFormat, unitFileName } from './plan.js';
import { ExportDirectoryError, unsafeEntry } from './safe-files.js';

/** The names the export writes in DIR besides the unit files. */
export const OWN_FILES: readonly string[] = [CHECKPOINT_FILE, CHECKPOINT_TEMPORARY_FILE, LOCK_FILE, CURSOR_FILE, CURSOR_TEMPORARY_FILE];

const DELTA_FILE = /^delta-(\d{6})-(?:raw|hourly|daily)\.(csv|ndjson)(\.tmp)?$/;

/** The unit files `checkpoint` names (none without one). */
function unitFilesOf(checkpoint: Checkpoint | null, format: ExportFormat): Set<string> {
  const ids = Object.entries(checkpoint?.units ?? {}).filter(([, unit]) => unit.skipped === undefined);
  return new Set(ids.map(([id]) => unitFileName(Number(id), format)));
}

/** A delta file `--since-last` wrote: of the export's format, numbered up to `deltas` (+1 for a leftover .tmp). */
function isDeltaFile(name: string, format: ExportFormat, deltas: number): boolean {
  const match = DELTA_FILE.exec(name);
  if (!match || match[2] !== format) return false;
  return Number(match[1]) <= deltas + (match[3] ? 1 : 0);
}

/**
 * Refuses (ExportDirectoryError) a `dir` holding anything the export did not write; see above.
 * `deltas`: how many deltas the change cursor says were written (0 before any).
 */
export async function checkDirectory(dir: string, checkpoint: Checkpoint | null, format: ExportFormat, deltas = 0): Promise<void> {
  const units = unitFilesOf(checkpoint, format);
  const refuse = (what: string) =>
    new ExportDirectoryError(
      `${dir} holds ${what}; the export writes only into a folder of its own files: remove it or choose another --out`,
    );
  for (const name of (await readdir(dir)).sort()) {
    const why = unsafeEntry(await lstat(join(dir, name)));
    if (why) throw refuse(`${name}, ${why}`);
    if (OWN_FILES.includes(name) || units.has(name) || (checkpoint !== null && isDeltaFile(name, format, deltas))) continue;
    if (/^cooling-unit-\d+\.(csv|ndjson)$/.test(name)) {
      throw refuse(`${name}, which ${checkpoint ? 'its checkpoint does not name' : 'no checkpoint names'} (not written by this export)`);
    }
    throw refuse(`${name}, a file the export did not write`);
  }
}

/** DIR, made when missing; it must be a directory (or a link to one, as a partner's own folder may be). */
export async function makeOutDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST' && error.code !== 'ENOTDIR') throw error;
  });
  const stats = await stat(dir).catch(() => null);
  if (!stats?.isDirectory()) throw new ExportDirectoryError(`--out ${dir} is not a directory`);
}
