// The command line of `coldtrack-export` for a full export (export.ts runs it): every option
// checked up front, each refusal a UsageError of one line that names the option, so a partner's
// script fails before it reads anything. `--since-last` has its own (export-since-last.ts).
import { parseArgs } from 'node:util';
import { AGGREGATIONS, type Aggregation, type ExportFormat, type ExportOptions, FORMATS, parseDay } from '../export/index.js';
import { SINCE_LAST_USAGE } from './export-since-last.js';

export const USAGE = `usage: COLDTRACK_TOKEN=ctk_... coldtrack-export --base-url URL --from YYYY-MM-DD --to YYYY-MM-DD --out DIR
       [--aggregation raw|hourly|daily] [--units all|1,2,3] [--format csv|ndjson] [--method bulk|pages]
       [--slice-records N] [--concurrency N] [--page-size N]
  --base-url     the service, e.g. https://api.coldtrack.example
  --from, --to   inclusive UTC days; longer than 366 days (3,660 daily) is read window by window
  --aggregation  hourly (default): means with min, max, sample_count; daily; raw: the readings
  --units        all (default): every unit the token may read; or a comma-separated list of ids
  --format       csv (default) or ndjson
  --out          DIR: one file per unit (cooling-unit-<id>.csv|ndjson) and export-checkpoint.json;
                 run the same command again to continue an interrupted export
  --method       bulk (default): with --units all, every unit at once by bulk pull, a slice of days a
                 request; pages: unit by unit, page by page (always for a list of units, and against a
                 service without bulk pulls)
  --slice-records  records a bulk slice holds at most, 1..5000000 (default 500000): whole days, so a
                 day may hold more; a smaller slice holds less in memory and is cheaper to read again
  --concurrency  units read at once by pages, 1..16 (default 4), all within the token's 100 requests a minute
  --page-size    records per request by pages, 1..1000 (default 1000)
${SINCE_LAST_USAGE}
The token is read from COLDTRACK_TOKEN, never from the command line.`;

export class UsageError extends Error {}

/** What the command line decides of the export's options: all of them but the callbacks. */
export type ExportArguments = Required<
  Pick<
    ExportOptions,
    'baseUrl' | 'from' | 'to' | 'aggregation' | 'units' | 'format' | 'outDir' | 'concurrency' | 'pageSize' | 'method' | 'sliceRecords'
  >
>;

function wholeNumber(name: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > max)
    throw new UsageError(`--${name} must be a whole number from 1 to ${max}, not "${text}"`);
  return Number(text);
}

/** The arguments, checked; a UsageError names the first problem in one line. */
export function parseExportArguments(argv: string[]): ExportArguments | 'help' {
  if (argv.some((argument) => /^--?(token|api-token)(=|$)/.test(argument))) {
    throw new UsageError(
      'the token is read from COLDTRACK_TOKEN only, never from the command line (it would show in ps and the shell history)',
    );
  }
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        'base-url': { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        aggregation: { type: 'string' },
        units: { type: 'string' },
        format: { type: 'string' },
        out: { type: 'string' },
        concurrency: { type: 'string' },
        'page-size': { type: 'string' },
        method: { type: 'string' },
        'slice-records': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
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
  if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:')
    throw new UsageError(`--base-url must be an http:// or https:// URL, not "${values['base-url']}"`);
  for (const name of ['from', 'to'] as const) {
    const day = values[name]!;
    if (parseDay(day) === null || day > '9999-12-31') throw new UsageError(`--${name} must be a date YYYY-MM-DD, not "${day}"`);
  }
  if (values.from! > values.to!) throw new UsageError(`--from (${values.from}) is after --to (${values.to})`);
  const aggregation = values.aggregation ?? 'hourly';
  if (!(AGGREGATIONS as readonly string[]).includes(aggregation))
    throw new UsageError(`--aggregation must be raw, hourly or daily, not "${aggregation}"`);
  const format = values.format ?? 'csv';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be csv or ndjson, not "${format}"`);
  const method = values.method ?? 'bulk';
  if (method !== 'bulk' && method !== 'pages') throw new UsageError(`--method must be bulk or pages, not "${method}"`);
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
    method,
    sliceRecords: wholeNumber('slice-records', values['slice-records'], 500_000, 5_000_000),
  };
}
