// How the export touches the files of DIR, so that nothing planted there (a symbolic link, a hard
// link to a file elsewhere, a FIFO) makes it write anywhere else: a new file is created with
// O_CREAT | O_EXCL | O_NOFOLLOW (never an existing one, never through a link), an existing one is
// opened with O_NOFOLLOW and used only when it is a regular file with no other name (one link).
// Names are the export's own (plan.ts, checkpoint.ts), joined to DIR: never a path read from disk.
import { constants } from 'node:fs';
import { type FileHandle, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** DIR holds something the export did not write, or it cannot write safely: refused (exit 2). */
export class ExportDirectoryError extends Error {
  override readonly name = 'ExportDirectoryError';
  readonly code = 'export_directory_refused';
}

// O_NOFOLLOW is 0 where the platform has none (Windows): there the lstat checks below still refuse links
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;
const NON_BLOCK = constants.O_NONBLOCK ?? 0;
const CREATE_NEW = constants.O_CREAT | constants.O_EXCL | NO_FOLLOW;

const kindOf = (stats: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean }) =>
  stats.isSymbolicLink() ? 'a symbolic link' : stats.isDirectory() ? 'a directory' : stats.isFile() ? 'a file' : 'not a regular file';

/** Why an existing entry may not be written (or read) as one of the export's files, or null. */
export function unsafeEntry(stats: { isSymbolicLink(): boolean; isDirectory(): boolean; isFile(): boolean; nlink: number }): string | null {
  if (!stats.isFile()) return kindOf(stats);
  if (stats.nlink > 1) return `a file with ${stats.nlink} hard links (writing it would change the other names too)`;
  return null;
}

/** Creates `path`, which must not exist in any form (a dangling link counts): read-write. */
export async function createNewFile(path: string, mode: 'rw' | 'w' = 'rw'): Promise<FileHandle> {
  return open(path, CREATE_NEW | (mode === 'rw' ? constants.O_RDWR : constants.O_WRONLY), 0o644);
}

/**
 * Opens an existing file of the export (read-write, or read-only), refusing a link or anything
 * but a regular file with one name; null when there is none.
 */
export async function openExistingFile(path: string, mode: 'rw' | 'r' = 'rw'): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO put there after the directory was checked does not hang the open
    handle = await open(path, (mode === 'rw' ? constants.O_RDWR : constants.O_RDONLY) | NO_FOLLOW | NON_BLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    // ELOOP: O_NOFOLLOW met a symbolic link (Linux, macOS); EMLINK on FreeBSD
    if (code === 'ELOOP' || code === 'EMLINK')
      throw new ExportDirectoryError(`${path} is a symbolic link; the export never writes through one`);
    throw error;
  }
  const why = unsafeEntry(await handle.stat());
  if (why) {
    await handle.close();
    throw new ExportDirectoryError(`${path} is ${why}; the export writes only regular files it created`);
  }
  return handle;
}

/** The text of an existing file of the export (see openExistingFile), or null when there is none. */
export async function readExistingFile(path: string): Promise<string | null> {
  const handle = await openExistingFile(path, 'r');
  if (!handle) return null;
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Writes `text` to DIR/name atomically and durably: into DIR/name.tmp created new (one left by a
 * crash, or a link put there, is unlinked first, which removes the name and never touches a
 * target), synced, renamed over DIR/name (a rename replaces a link, never writes through it), then
 * the folder synced so the rename survives a power cut.
 */
export async function writeFileAtomically(dir: string, name: string, text: string): Promise<void> {
  const path = join(dir, name);
  const temporary = `${path}.tmp`;
  let handle: FileHandle;
  try {
    handle = await createNewFile(temporary, 'w');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    await unlink(temporary);
    handle = await createNewFile(temporary, 'w');
  }
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } catch {
    // some file systems refuse fsync on a directory; the rename is still atomic
  } finally {
    await directory.close();
  }
}
