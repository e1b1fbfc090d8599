// `npm run export -- --base-url URL --from YYYY-MM-DD --to YYYY-MM-DD [--aggregation raw|hourly|daily]
// [--units all|1,2,3] [--format csv|ndjson] --out DIR`: a partner's copy of the sensor history its
// token may read, one file per cooling unit, through the typed client (client/export/: layout,
// unit discovery, checkpoint). The token comes from COLDTRACK_TOKEN only: an argument would show
// in `ps` and the shell history. Interrupted (Ctrl-C, a crash, a kill), the same command continues
// where it stopped, no record missing or written twice. Progress on stderr: a bar on a terminal,
// plain lines otherwise. Exit status: 0 complete, 1 stopped (the service refused: 401/403/404, or
// it stayed unreachable), 2 bad arguments, 130 interrupted.
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { ColdtrackApiError, ColdtrackClient, type ClientEvent } from '../../client/index.js';
import {
  AGGREGATIONS,
  type Aggregation,
  CheckpointError,
  type ExportFormat,
  ExportConflictError,
  type ExportOptions,
  type ExportProgress,
  exportSensorHistory,
  ExportUnitError,
  FORMATS,
  parseDay,
} from '../../client/export/index.js';

const USAGE = `usage: COLDTRACK_TOKEN=ctk_... npm run export -- --base-url URL --from YYYY-MM-DD --to YYYY-MM-DD --out DIR
       [--aggregation raw|hourly|daily] [--units all|1,2,3] [--format csv|ndjson] [--concurrency N] [--page-size N]
  --base-url     the service, e.g. https://api.coldtrack.example
  --from, --to   inclusive UTC days; longer than 366 days (3,660 daily) is read window by window
  --aggregation  hourly (default): means with min, max, sample_count; daily; raw: the readings
  --units        all (default): every unit the token may read; or a comma-separated list of ids
  --format       csv (default) or ndjson
  --out          DIR: one file per unit (cooling-unit-<id>.csv|ndjson) and export-checkpoint.json;
                 run the same command again to continue an interrupted export
  --concurrency  units read at once, 1..16 (default 4), all within the token's 100 requests a minute
  --page-size    records per request, 1..1000 (default 1000)
The token is read from COLDTRACK_TOKEN, never from the command line.`;

export class UsageError extends Error {}

/** What the command line decides of the export's options: all of them but the callbacks. */
export type ExportArguments = Required<Pick<ExportOptions, 'baseUrl' | 'from' | 'to' | 'aggregation' | 'units' | 'format' | 'outDir' | 'concurrency' | 'pageSize'>>;

function wholeNumber(name: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max) throw new UsageError(`--${name} must be a whole number from 1 to ${max}, not "${text}"`);
  return Number(text);
}

/** The arguments, checked; a UsageError names the first problem in one line. */
export function parseExportArguments(argv: string[]): ExportArguments | 'help' {
  if (argv.some((argument) => /^--?(token|api-token)(=|$)/.test(argument))) {
    throw new UsageError('the token is read from COLDTRACK_TOKEN only, never from the command line (it would show in ps and the shell history)');
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'base-url': { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, aggregation: { type: 'string' },
        units: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' }, concurrency: { type: 'string' },
        'page-size': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]!);
  }
  if (values.help) return 'help';
  for (const required of ['base-url', 'from', 'to', 'out'] as const) {
    if (!values[required]) throw new UsageError(`--${required} is required`);
  }
  let baseUrl: URL;
  try {
    baseUrl = new URL(values['base-url']!);
  } catch {
    throw new UsageError(`--base-url must be an http:// or https:// URL, not "${values['base-url']}"`);
  }
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') throw new UsageError(`--base-url must be an http:// or https:// URL, not "${values['base-url']}"`);
  for (const name of ['from', 'to'] as const) {
    const day = values[name]!;
    if (parseDay(day) === null || day > '9999-12-31') throw new UsageError(`--${name} must be a date YYYY-MM-DD, not "${day}"`);
  }
  if (values.from! > values.to!) throw new UsageError(`--from (${values.from}) is after --to (${values.to})`);
  const aggregation = values.aggregation ?? 'hourly';
  if (!(AGGREGATIONS as readonly string[]).includes(aggregation)) throw new UsageError(`--aggregation must be raw, hourly or daily, not "${aggregation}"`);
  const format = values.format ?? 'csv';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be csv or ndjson, not "${format}"`);
  const unitsText = values.units ?? 'all';
  let units: 'all' | number[] = 'all';
  if (unitsText !== 'all') {
    const ids = unitsText.split(',').map((id) => id.trim());
    if (ids.some((id) => !/^\d{1,10}$/.test(id) || Number(id) < 1 || Number(id) > 2_147_483_647)) {
      throw new UsageError(`--units must be all or a comma-separated list of unit ids, not "${unitsText}"`);
    }
    units = [...new Set(ids.map(Number))];
  }
  return {
    baseUrl: values['base-url']!,
    from: values.from!,
    to: values.to!,
    aggregation: aggregation as Aggregation,
    units,
    format: format as ExportFormat,
    outDir: values.out!,
    concurrency: wholeNumber('concurrency', values.concurrency, 4, 16),
    pageSize: wholeNumber('page-size', values['page-size'], 1000, 1000),
  };
}

const duration = (seconds: number) => {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  return s >= 3600 ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m` : s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
};
const count = (n: number) => n.toLocaleString('en-US');

/** How a stop reads: the status, the service's code and message, and what to do. */
function reasonOf(error: unknown): string {
  const unit = error instanceof ExportUnitError ? `cooling unit ${error.unitId}: ` : '';
  const cause = error instanceof ExportUnitError ? error.cause : error;
  if (cause instanceof ColdtrackApiError) {
    const hint = cause.status === 401 ? ' (is COLDTRACK_TOKEN right, and not revoked or expired?)'
      : cause.status === 403 ? ` (the token needs the ${String(cause.details?.required_scope ?? 'sensor_data')} scope)`
        : cause.status === 404 ? ' (not a unit this token may read)' : '';
    return `${unit}${cause.status} ${cause.code}: ${cause.message}${hint}`;
  }
  return `${unit}${cause instanceof Error ? cause.message : String(cause)}`;
}

async function main(): Promise<number> {
  let args: ExportArguments | 'help';
  try {
    args = parseExportArguments(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`export: ${error.message} (--help for usage)`);
    return 2;
  }
  if (args === 'help') {
    console.log(USAGE);
    return 0;
  }
  const token = process.env.COLDTRACK_TOKEN?.trim();
  if (!token) {
    console.error('export: set COLDTRACK_TOKEN to an API token with the sensor_data scope (--help for usage)');
    return 2;
  }

  const tty = Boolean(process.stderr.isTTY);
  const bars = tty
    ? new cliProgress.MultiBar({
      format: '{bar} {percentage}% | {records}/{estimate} records | {pages} pages | units {units} | {status} | ETA {remaining}',
      hideCursor: true,
      clearOnComplete: false,
    }, cliProgress.Presets.shades_classic)
    : null;
  const say = (line: string) => {
    if (bars) bars.log(`${line}\n`);
    else console.error(line);
  };
  const started = Date.now();
  let latest: ExportProgress = { records: 0, estimatedTotal: null, pages: 0, unitsDone: 0, unitsTotal: 0 };
  let recordsAtStart: number | null = null;
  let status = 'starting';
  let waitingUntil = 0;
  let lastLine = Date.now(); // plain lines: the first after 5 s (short exports print only their result)
  const bar = bars?.create(1, 0, { records: '0', estimate: '?', pages: '0', units: '0/0', status, remaining: '?' });

  const eta = () => {
    const gained = latest.records - (recordsAtStart ?? latest.records);
    const rate = gained / Math.max(0.001, (Date.now() - started) / 1000);
    return latest.estimatedTotal === null || gained === 0 ? '?' : duration((latest.estimatedTotal - latest.records) / rate);
  };
  const statusNow = () => (waitingUntil > Date.now() ? `${status} ${duration((waitingUntil - Date.now()) / 1000)}` : status);
  const render = (force = false) => {
    const total = latest.estimatedTotal ?? 0;
    if (bar) {
      bar.setTotal(Math.max(1, total));
      bar.update(latest.records, {
        records: count(latest.records), estimate: latest.estimatedTotal === null ? '?' : `~${count(total)}`,
        pages: count(latest.pages), units: `${latest.unitsDone}/${latest.unitsTotal}`, status: statusNow(), remaining: eta(),
      });
    } else if (force || Date.now() - lastLine >= 5000) {
      lastLine = Date.now();
      const share = total > 0 ? ` (${Math.floor((100 * latest.records) / total)}%)` : '';
      say(`exported ${count(latest.records)} of ${latest.estimatedTotal === null ? '?' : `~${count(total)}`} records${share}, ` +
        `${count(latest.pages)} pages, units ${latest.unitsDone}/${latest.unitsTotal} done, ETA ${eta()}`);
    }
  };

  let requests = 0;
  const onEvent = (event: ClientEvent) => {
    if (event.type === 'request') requests++;
    if (event.type === 'rate-limit-wait') {
      status = 'waiting for the rate limit';
      waitingUntil = event.until.getTime();
      say(`waiting ${duration(event.ms / 1000)} for the token's rate limit (until ${event.until.toISOString().slice(11, 19)} UTC)`);
    } else if (event.type === 'retry' && event.reason !== 'rate_limited') {
      status = `retrying (${event.status ?? event.reason})`;
      waitingUntil = Date.now() + event.ms;
      say(`${event.status ? `${event.status} ${event.reason}` : event.reason}: retrying in ${(event.ms / 1000).toFixed(1)} s (attempt ${event.attempt + 1})`);
    } else if (event.type === 'retry') {
      say(`429: the token's budget is spent elsewhere too; waiting ${duration(event.ms / 1000)} for its window to end`);
    } else if (event.type === 'response' && event.status < 400) {
      status = 'fetching';
      waitingUntil = 0;
    }
    render();
  };

  const client = new ColdtrackClient({ baseUrl: args.baseUrl, token, onEvent, userAgent: 'coldtrack-export' });
  const interrupt = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    if (++interrupts > 1) process.exit(130); // the checkpoint is safe at any instant
    say('interrupted: stopping after the pages being written (Ctrl-C again to stop at once)');
    interrupt.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // test hook: dies (SIGKILL) after this many pages reached their files and before the
  // checkpoint counted the last one, the worst instant for a crash
  const crashAfter = Number(process.env.COLDTRACK_EXPORT_TEST_KILL_AFTER_PAGES ?? 0);
  let pagesWritten = 0;

  const ticker = setInterval(() => render(), bar ? 250 : 1000);
  try {
    const summary = await exportSensorHistory(client, {
      ...args,
      signal: interrupt.signal,
      onNotice: say,
      onProgress: (progress) => {
        recordsAtStart ??= progress.records;
        latest = progress;
        render();
      },
      onPageWritten: crashAfter > 0
        ? () => {
          if (++pagesWritten >= crashAfter) process.kill(process.pid, 'SIGKILL');
        }
        : undefined,
    });
    status = 'done';
    render(true);
    bars?.stop();
    const seconds = (Date.now() - started) / 1000;
    console.error(summary.alreadyComplete
      ? `export already complete in ${args.outDir}: ${count(summary.records)} records in ${summary.files.length} files; nothing to do`
      : `export complete: ${count(summary.records)} records in ${summary.files.length} files in ${args.outDir} ` +
        `(${count(summary.recordsThisRun)} this run, ${count(requests)} requests, ${duration(seconds)})`);
    return 0;
  } catch (error) {
    bars?.stop();
    if (interrupt.signal.aborted) {
      console.error(`export interrupted: ${count(latest.records)} records written to ${args.outDir}; run the same command again to continue`);
      return 130;
    }
    if (error instanceof ExportConflictError) {
      console.error(`export: ${error.message}`);
      return 2;
    }
    console.error(`export stopped: ${reasonOf(error)}` +
      (error instanceof CheckpointError ? '' : `; ${count(latest.records)} records kept in ${args.outDir}, the same command continues from there`));
    return 1;
  } finally {
    clearInterval(ticker);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // exit now rather than when fetch's idle kept-alive connections time out
  process.exit(await main());
}
