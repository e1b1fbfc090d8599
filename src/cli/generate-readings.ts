// `npm run generate-readings -- --units N --days D [--format csv|ndjson] [--seed S]
//   [--end YYYY-MM-DD] [--first-unit-id K] [--out FILE]`: reproducible demo/benchmark readings
// (src/sensors/generate.ts) on stdout or into a file, ready for `npm run ingest`.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import type { Writable } from 'node:stream';
import { defaultEnd, readingChunks, readingCount } from '../sensors/generate.js';

const usage =
  'usage: npm run generate-readings -- --units N --days D [--format csv|ndjson] [--seed S]\n' +
  '         [--end YYYY-MM-DD (exclusive; default today)] [--first-unit-id K (default 1)] [--out FILE]';

function fail(message: string): never {
  console.error(message);
  console.error(usage);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      units: { type: 'string' },
      days: { type: 'string' },
      format: { type: 'string', default: 'csv' },
      seed: { type: 'string', default: '1' },
      end: { type: 'string' },
      'first-unit-id': { type: 'string', default: '1' },
      out: { type: 'string' },
    },
  }));
} catch (error) {
  fail((error as Error).message);
}

const whole = (name: string, text: string | undefined, min: number) => {
  if (text === undefined || !/^\d+$/.test(text) || Number(text) < min) fail(`--${name} must be a whole number >= ${min}`);
  return Number(text);
};
const format = values.format;
if (format !== 'csv' && format !== 'ndjson') fail('--format must be csv or ndjson');
if (values.end !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.end)) fail('--end must be YYYY-MM-DD');
const options = {
  units: whole('units', values.units, 1),
  days: whole('days', values.days, 1),
  seed: whole('seed', values.seed, 0),
  firstUnitId: whole('first-unit-id', values['first-unit-id'], 1),
  end: values.end ? new Date(`${values.end}T00:00:00Z`) : defaultEnd(),
  format,
} as const;

const out: Writable = values.out ? createWriteStream(values.out) : process.stdout;
for (const chunk of readingChunks(options)) {
  if (!out.write(chunk)) await once(out, 'drain');
}
out.end();
if (values.out) {
  await once(out, 'finish');
  console.error(`wrote ${readingCount(options)} readings to ${values.out}`);
}
