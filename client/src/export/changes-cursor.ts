// The change feed's cursor kept beside an export's checkpoint, DIR/export-changes-cursor.json: the
// position in GET /api/v1/sensor-data/changes from which the copy in DIR is current. The first
// export takes it (since=now) BEFORE it reads any history, so a reading that lands while the
// export runs is in the files or in the next delta (or both: the deltas are upserts), never in
// neither. `--since-last` (delta.ts) replaces it only once a delta's files are on disk.
import { join } from 'node:path';
import type { ColdtrackClient } from '../index.js';
import type { CallOptions } from '../transport.js';
import { checkDirectory, makeOutDirectory } from './directory.js';
import type { ExportFormat } from './plan.js';
import { readExistingFile, writeFileAtomically } from './safe-files.js';

import { CURSOR_FILE } from './checkpoint.js';

export { CURSOR_FILE, CURSOR_TEMPORARY_FILE } from './checkpoint.js';

export interface ChangesCursor {
  version: 1;
  /** the service the cursor is of (a cursor is only valid there) */
  base_url: string;
  cursor: string;
  /** deltas written from this directory so far: the next one is numbered deltas + 1 */
  deltas: number;
  updated_at: string;
}

export class ChangesCursorError extends Error {
  override readonly name = 'ChangesCursorError';
}

export async function readChangesCursor(dir: string): Promise<ChangesCursor | null> {
  // never through a link planted there (safe-files.ts)
  const text = await readExistingFile(join(dir, CURSOR_FILE));
  if (text === null) return null;
  try {
    const state = JSON.parse(text) as ChangesCursor;
    const valid =
      state.version === 1 &&
      typeof state.base_url === 'string' &&
      typeof state.cursor === 'string' &&
      Number.isInteger(state.deltas) &&
      state.deltas >= 0;
    if (!valid) throw new Error('unknown version or fields');
    return state;
  } catch (error) {
    throw new ChangesCursorError(`${join(dir, CURSOR_FILE)} is not a cursor file of this exporter (${(error as Error).message})`);
  }
}

export function saveChangesCursor(dir: string, state: Omit<ChangesCursor, 'version' | 'updated_at'>): Promise<void> {
  const file: ChangesCursor = { version: 1, ...state, updated_at: new Date().toISOString() };
  return writeFileAtomically(dir, CURSOR_FILE, `${JSON.stringify(file, null, 1)}\n`);
}

/**
 * Before a new export reads anything: the feed's current cursor, stored beside the checkpoint to
 * come. Kept when there already is one (an export resumed keeps the cursor of its first run).
 */
export async function takeStartingCursor(
  client: ColdtrackClient,
  dir: string,
  baseUrl: string,
  format: ExportFormat,
  call: CallOptions = {},
): Promise<void> {
  await makeOutDirectory(dir);
  if (await readChangesCursor(dir)) return;
  // nothing is written into (nor asked of the service for) a folder the export refuses
  await checkDirectory(dir, null, format);
  const page = await client.sensorDataChanges({ since: 'now' }, call);
  await saveChangesCursor(dir, { base_url: baseUrl, cursor: page.meta.pagination.next_cursor, deltas: 0 });
}
