#!/usr/bin/env node
// `coldtrack-export --base-url URL --from YYYY-MM-DD --to YYYY-MM-DD [--aggregation raw|hourly|daily]
// [--units all|1,2,3] [--format csv|ndjson] --out DIR` (the package's command; `npm run export --`
// in the service's repository runs this same file): a partner's copy of the sensor history its
// token may read, one file per cooling unit, through the typed client (../export/: layout,
// unit discovery, checkpoint). The token comes from COLDTRACK_TOKEN only: an argument would show
// in `ps` and the shell history. Interrupted (Ctrl-C, a crash, a kill), the same command continues
// where it stopped, no record missing or written twice. Progress on stderr: a bar on a terminal,
// plain lines otherwise (export-progress.ts). Exit status: 0 complete, 1 stopped (the service refused: 401/403/404, or
// it stayed unreachable, or asked to wait longer than the client waits), 2 bad arguments or a DIR the
// export refuses (another export's, or holding what it did not write: ../export/directory.ts), 130
// interrupted. No line it prints carries the token or a stack trace. A new export first stores the
// change feed's cursor beside its checkpoint; `--since-last` then writes what changed since
// (export-since-last.ts).
import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ColdtrackApiError, ColdtrackClient, ColdtrackRetryLaterError } from '../index.js';
import {
  CheckpointError,
  ExportConflictError,
  ExportDirectoryError,
  type ExportOptions,
  type ExportSummary,
  exportSensorHistory,
  ExportUnitError,
} from '../export/index.js';
import { redactorFor } from '../redact.js';
import { DEFAULT_USER_AGENT } from '../version.js';
import { takeStartingCursor } from '../export/changes-cursor.js';
import { CHECKPOINT_FILE } from '../export/checkpoint.js';
import { count, duration, ExportDisplay } from './export-progress.js';
import { type ExportArguments, parseExportArguments, USAGE, UsageError } from './export-arguments.js';
import { parseSinceLastArguments, runSinceLast } from './export-since-last.js';

/** How a stop reads: the status, the service's code and message, and what to do. */
function reasonOf(error: unknown): string {
  const unit = error instanceof ExportUnitError ? `cooling unit ${error.unitId}: ` : '';
  const cause = error instanceof ExportUnitError ? error.cause : error;
  if (cause instanceof ColdtrackApiError) {
    const hint =
      cause.status === 401
        ? ' (is COLDTRACK_TOKEN right, and not revoked or expired?)'
        : cause.status === 403
          ? ` (the token needs the ${String(cause.details?.required_scope ?? 'sensor_data')} scope)`
          : cause.status === 404
            ? ' (not a unit this token may read)'
            : '';
    return `${unit}${cause.status} ${cause.code}: ${cause.message}${hint}`;
  }
  if (cause instanceof ColdtrackRetryLaterError && cause.retryAt) {
    return `${unit}${cause.message}; the service asks to be called again after ${cause.retryAt.toISOString()}`;
  }
  return `${unit}${cause instanceof Error ? cause.message : String(cause)}`;
}

/**
 * Every line the command prints about a failure goes through here: one line, no stack, and never
 * the token (the client already redacts what the service sends; this also covers file-system
 * errors and anything unforeseen).
 */
let redact = redactorFor(undefined);
const oneLine = (text: string) => redact(text.replace(/\s*\n\s*/g, ' ').trim());

/** The command and the client's version, as a token's usage and audit events show the last client. */
const USER_AGENT = `coldtrack-export ${DEFAULT_USER_AGENT}`;

async function main(): Promise<number> {
  if (process.argv.includes('--since-last')) return sinceLast(process.argv.slice(2));
  const args = readArguments(process.argv.slice(2));
  if (typeof args === 'number') return args;
  const token = readToken();
  if (token === null) return 2;
  redact = redactorFor(token);
  const display = new ExportDisplay(Boolean(process.stderr.isTTY));
  const client = new ColdtrackClient({ baseUrl: args.baseUrl, token, onEvent: display.onEvent, userAgent: USER_AGENT });
  const interrupt = interruptOnSignals(() => display.stop());
  const onPageWritten = crashTestHook();
  const ticker = display.startTicking();
  try {
    // a new export: the feed's cursor first, so what lands while it runs is in the next delta
    if (!existsSync(join(args.outDir, CHECKPOINT_FILE)))
      await takeStartingCursor(client, args.outDir, args.baseUrl, args.format, { signal: interrupt.signal });
    const summary = await exportSensorHistory(client, {
      ...args,
      signal: interrupt.signal,
      onNotice: (line) => display.say(redact(line)),
      onProgress: display.onProgress,
      onPageWritten,
    });
    // a re-run of a complete export did nothing: its one line, without a progress line of zeros
    if (summary.alreadyComplete) display.discard();
    else display.finish();
    console.error(completionLine(summary, args.outDir, display));
    return 0;
  } catch (error) {
    display.stop();
    return reportStop(error, { interrupted: interrupt.signal.aborted, outDir: args.outDir, records: display.latest.records });
  } finally {
    clearInterval(ticker);
    interrupt.release();
  }
}

async function sinceLast(argv: string[]): Promise<number> {
  const args = parseSinceLastArguments(argv);
  if (typeof args === 'string') {
    console.error(`export: ${args} (--help for usage)`);
    return 2;
  }
  const token = readToken();
  if (token === null) return 2;
  const client = new ColdtrackClient({ baseUrl: args.baseUrl, token, userAgent: USER_AGENT });
  const interrupt = interruptOnSignals(() => {});
  try {
    return await runSinceLast(client, args, interrupt.signal);
  } finally {
    interrupt.release();
  }
}

/** The arguments, or the exit status after the usage (0) or a one-line complaint (2). */
function readArguments(argv: string[]): ExportArguments | number {
  let args: ExportArguments | 'help';
  try {
    args = parseExportArguments(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(oneLine(`export: ${error.message} (--help for usage)`));
    return 2;
  }
  if (args === 'help') {
    console.log(USAGE);
    return 0;
  }
  return args;
}

function readToken(): string | null {
  const token = process.env.COLDTRACK_TOKEN?.trim();
  if (token) return token;
  console.error('export: set COLDTRACK_TOKEN to an API token with the sensor_data scope (--help for usage)');
  return null;
}

/** Ctrl-C (or SIGTERM) stops the export after the pages being written; a second one at once. */
function interruptOnSignals(onInterrupt: () => void) {
  const interrupt = new AbortController();
  let interrupts = 0;
  // silent until the pages being written are on disk: then the one line of reportStop says how to
  // continue (a line now and another then read as two different outcomes)
  const onSignal = () => {
    if (++interrupts > 1) process.exit(130); // the checkpoint is safe at any instant
    onInterrupt();
    interrupt.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: interrupt.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/**
 * Test hook: dies (SIGKILL) after COLDTRACK_EXPORT_TEST_KILL_AFTER_PAGES pages reached their files
 * and before the checkpoint counted the last one, the worst instant for a crash.
 */
function crashTestHook(): ExportOptions['onPageWritten'] {
  const crashAfter = Number(process.env.COLDTRACK_EXPORT_TEST_KILL_AFTER_PAGES ?? 0);
  let pagesWritten = 0;
  return crashAfter > 0
    ? () => {
        if (++pagesWritten >= crashAfter) process.kill(process.pid, 'SIGKILL');
      }
    : undefined;
}

function completionLine(summary: ExportSummary, outDir: string, display: ExportDisplay): string {
  const seconds = (Date.now() - display.started) / 1000;
  return summary.alreadyComplete
    ? `export already complete in ${outDir}: ${count(summary.records)} records in ${summary.files.length} files; nothing to do`
    : `export complete: ${count(summary.records)} records in ${summary.files.length} files in ${outDir} ` +
        `(${count(summary.recordsThisRun)} this run, ${count(display.requests)} requests, ${duration(seconds)})`;
}

/** The last line of an export that did not complete, and its exit status (130, 2 or 1). */
function reportStop(error: unknown, run: { interrupted: boolean; outDir: string; records: number }): number {
  if (run.interrupted) {
    console.error(
      `export interrupted: ${count(run.records)} records safely in ${run.outDir}; to continue, run the same command again: ${sameCommand()}`,
    );
    return 130;
  }
  // DIR holds another export, or something the export did not write: nothing was written
  if (error instanceof ExportConflictError || error instanceof ExportDirectoryError) {
    console.error(oneLine(`export: ${error.message}`));
    return 2;
  }
  // a checkpoint problem is not fixed by running again; anything else is continued by it
  console.error(
    oneLine(`export stopped: ${reasonOf(error)}`) +
      (error instanceof CheckpointError
        ? ''
        : `; ${count(run.records)} records kept in ${run.outDir}, the same command continues from there`),
  );
  return 1;
}

/**
 * This run's command line as a shell would take it back (the token stays in the environment):
 * the package's command, or `npm run export --` when the service's repository started it so.
 */
function sameCommand(): string {
  const quoted = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`);
  const fromRepository = process.env.npm_package_name === 'coldtrack-api' && process.env.npm_lifecycle_event === 'export';
  const command = fromRepository ? ['npm', 'run', 'export', '--'] : ['coldtrack-export'];
  return [...command, ...process.argv.slice(2).map(quoted)].join(' ');
}

/** Started as a program (node export.js, or the package's bin link, which resolves to this file). */
function startedAsProgram(): boolean {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/** main(), with anything it did not foresee reported in one line (no stack trace) and exit 1. */
async function mainReportingSurprises(): Promise<number> {
  try {
    return await main();
  } catch (error) {
    console.error(oneLine(`export failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`));
    return 1;
  }
}

if (startedAsProgram()) {
  // exit now rather than when fetch's idle kept-alive connections time out
  process.exit(await mainReportingSurprises());
}
