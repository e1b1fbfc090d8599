// `npm run generate-readings -- --days D [--company ID] [--units N] [--format csv|ndjson] [--seed S]
//   [--end YYYY-MM-DD] [--out FILE]`: reproducible demo/benchmark readings (src/sensors/generate.ts)
// for live cooling units of one company of the database (DATABASE_URL, or the running npm start's),
// on stdout or into a file, ready for `npm run ingest`. The units are read from the database, so
// the readings never name another company's unit, a deleted one or one that does not exist.
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import type { Writable } from 'node:stream';
import pg from 'pg';
import { commandDatabase } from '../db/embedded-handoff.js';
import { MAX_INT4 } from '../db/int4.js';
import { CONNECT_TIMEOUT_MS } from '../db/pool.js';
import { loadQueries } from '../db/sql.js';
import { defaultEnd, readingChunks, readingCount } from '../sensors/generate.js';

const sql = loadQueries('generate-readings', ['companyById', 'firstCompanyWithLiveUnits']);
const unitSql = loadQueries('company-units', ['liveUnitsOfCompany']);

const usage =
  'usage: npm run generate-readings -- --days D [--company ID] [--units N] [--format csv|ndjson] [--seed S]\n' +
  '         [--end YYYY-MM-DD] [--out FILE]\n' +
  '  --company  whose live (not deleted) cooling units get readings; default: the first company (lowest id) that has any\n' +
  "  --units    the company's first N live units by id; default: all of them\n" +
  '  --end      exclusive; default today 00:00 UTC. --format default csv; --seed default 1\n' +
  '  --out      the file to write; default stdout, for a pipe (| npm run ingest -- -): on a terminal --out is required.\n' +
  '             readings.csv and readings.ndjson at the repository root are git-ignored\n' +
  "  The units come from DATABASE_URL (or the running npm start's database).";

function fail(message: string): never {
  console.error(message);
  console.error(usage);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      company: { type: 'string' },
      units: { type: 'string' },
      days: { type: 'string' },
      format: { type: 'string', default: 'csv' },
      seed: { type: 'string', default: '1' },
      end: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean' },
    },
  }));
} catch (error) {
  fail((error as Error).message);
}
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const whole = (name: string, text: string | undefined, min: number) => {
  if (text === undefined || !/^\d{1,10}$/.test(text) || Number(text) < min || Number(text) > MAX_INT4) {
    fail(`--${name} must be a whole number >= ${min}`);
  }
  return Number(text);
};
const format = values.format;
if (format !== 'csv' && format !== 'ndjson') fail('--format must be csv or ndjson');
if (values.end !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(values.end)) fail('--end must be YYYY-MM-DD');
const days = whole('days', values.days, 1);
const seed = whole('seed', values.seed, 0);
const companyAsked = values.company === undefined ? null : whole('company', values.company, 1);
const unitsAsked = values.units === undefined ? null : whole('units', values.units, 1);
// megabytes of CSV on a terminal help no one: a file, or a pipe
if (!values.out && process.stdout.isTTY) fail('give --out FILE, or pipe the readings (| npm run ingest -- -)');
const database = commandDatabase('npm run generate-readings');
if ('problem' in database) {
  console.error(database.problem);
  process.exit(1);
}

interface Company {
  id: number;
  name: string;
  unitIds: number[];
}

/** The company asked for (or the first with live units) and its live units, by id. */
async function companyUnits(url: string): Promise<Company | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    const { rows } = await (companyAsked === null
      ? client.query<{ id: number; name: string }>(sql.firstCompanyWithLiveUnits)
      : client.query<{ id: number; name: string }>(sql.companyById, [companyAsked]));
    if (!rows[0]) return null;
    const units = await client.query<{ id: number }>(unitSql.liveUnitsOfCompany, [rows[0].id]);
    return { ...rows[0], unitIds: units.rows.map((unit) => unit.id) };
  } catch (error) {
    console.error(`generate-readings: could not read the cooling units: ${(error as Error).message}`);
    // 42P01: no companies table: the database was never migrated
    if ((error as { code?: string }).code === '42P01') console.error('the database is not migrated yet: run npm run migrate first');
    process.exit(1);
  } finally {
    await client.end().catch(() => {});
  }
}

const company = await companyUnits(database.url);
if (!company) {
  if (companyAsked !== null) fail(`company ${companyAsked}: no such company`);
  console.error("this database has no live cooling units yet: load them first (npm run seed -- --demo loads the demo's)");
  process.exit(1);
}
const live = company.unitIds.length;
if (live === 0) fail(`company ${company.id} (${company.name}) has no live cooling units`);
if (unitsAsked !== null && unitsAsked > live) {
  fail(`company ${company.id} (${company.name}) has ${live} live cooling units: --units ${live} at most, or leave --units out`);
}
const unitIds = company.unitIds.slice(0, unitsAsked ?? live);
const named = unitIds.length <= 20 ? unitIds.join(', ') : `${unitIds.slice(0, 20).join(', ')}, ...`;
console.error(
  `company ${company.id} (${company.name}): readings for ${unitIds.length} of its ${live} live cooling units (${named})` +
    (companyAsked === null ? '; --company to choose another' : ''),
);

const options = {
  units: unitIds.length,
  unitIds,
  days,
  seed,
  end: values.end ? new Date(`${values.end}T00:00:00Z`) : defaultEnd(),
  format,
} as const;
const out: Writable = values.out ? createWriteStream(values.out) : process.stdout;
out.on('error', (error) => {
  console.error(`generate-readings: cannot write ${values.out ?? 'stdout'}: ${error.message}`);
  process.exit(1);
});
for (const chunk of readingChunks(options)) {
  if (!out.write(chunk)) await once(out, 'drain');
}
out.end();
if (values.out) {
  await once(out, 'finish');
  console.error(`wrote ${readingCount(options)} readings to ${values.out}`);
}
