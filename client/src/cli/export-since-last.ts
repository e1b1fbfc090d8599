// `coldtrack-export --since-last --base-url URL --out DIR [--page-size N]`: the delta of a
// complete export in DIR since its last run (../export/delta.ts: what is read, what the files
// hold). Exit status: 0 written (or nothing changed), 1 stopped (the service refused or stayed
// unreachable; the same command starts the delta over), 2 bad arguments, or a folder that holds no
// complete export with a cursor or holds what the export did not write, 3 the cursor expired
// (export again), 130 interrupted.
import { parseArgs } from 'node:util';
import { ColdtrackApiError, type ColdtrackClient } from '../index.js';
import { ChangesCursorError } from '../export/changes-cursor.js';
import { CheckpointError } from '../export/checkpoint.js';
import { exportChangesSinceLast } from '../export/delta.js';
import { ExportDirectoryError } from '../export/safe-files.js';

export const SINCE_LAST_USAGE = `       coldtrack-export --since-last --base-url URL --out DIR [--page-size N]
  --since-last   the records that changed since the last run (or the export) in DIR: delta-<n>-raw, -hourly and -daily
                 files keyed for an upsert (client/README.md), then the new cursor beside the checkpoint`;

export interface SinceLastArguments {
  baseUrl: string;
  outDir: string;
  pageSize: number;
}

/** The arguments of a --since-last run, or a one-line complaint. */
export function parseSinceLastArguments(argv: string[]): SinceLastArguments | string {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'since-last': { type: 'boolean' },
        'base-url': { type: 'string' },
        out: { type: 'string' },
        'page-size': { type: 'string' },
      },
    }));
  } catch (error) {
    // the export's own options (--from, --units ...) come from the checkpoint: naming them is a mistake
    return `${(error as Error).message.split('\n')[0]!} (with --since-last only --base-url, --out and --page-size are taken)`;
  }
  if (!values['base-url'] || !values.out) return '--since-last needs --base-url and --out';
  const pageSize = values['page-size'] ?? '1000';
  if (!/^\d+$/.test(pageSize) || Number(pageSize) < 1 || Number(pageSize) > 1000) {
    return `--page-size must be a whole number from 1 to 1000, not "${pageSize}"`;
  }
  return { baseUrl: values['base-url'], outDir: values.out, pageSize: Number(pageSize) };
}

/** Runs the delta; returns the exit status after one closing line on stderr. */
export async function runSinceLast(client: ColdtrackClient, args: SinceLastArguments, signal: AbortSignal): Promise<number> {
  try {
    const summary = await exportChangesSinceLast(client, {
      ...args,
      signal,
      onNotice: (line) => console.error(line),
    });
    console.error(
      summary.delta === null
        ? `no changes since the last run: nothing written in ${args.outDir}`
        : `delta ${summary.delta} written in ${args.outDir}: ${summary.records.raw} readings, ${summary.records.hourly} hourly and ` +
            `${summary.records.daily} daily buckets from ${summary.changes} changed spans (${summary.files.join(', ')})`,
    );
    return 0;
  } catch (error) {
    if (signal.aborted) {
      console.error(`export interrupted: no delta written; run the same command again`);
      return 130;
    }
    if (error instanceof ColdtrackApiError && error.status === 410) {
      console.error(`export: ${error.message} (the copy in ${args.outDir} cannot be brought up to date: export into a new folder)`);
      return 3;
    }
    if (error instanceof CheckpointError || error instanceof ChangesCursorError || error instanceof ExportDirectoryError) {
      console.error(`export: ${error.message}`);
      return 2;
    }
    const reason = error instanceof ColdtrackApiError ? `${error.status} ${error.code}: ${error.message}` : (error as Error).message;
    console.error(`export stopped: ${reason}; no delta written, the same command starts it again`);
    return 1;
  }
}
