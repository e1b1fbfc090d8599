// What a database built by the migrations holds, as text that can be compared and committed: the
// schema as pg_dump writes it (public, and on TimescaleDB the aggregates' materialization
// hypertables in _timescaledb_internal), then what a schema dump leaves out: the rows the
// migrations write (sensor_storage, pgmigrations) and TimescaleDB's own view of the store
// (hypertables and their chunk intervals, continuous aggregates, columnstore settings, policies).
// test/db/frozen-migrations.test.ts compares a fresh database with the snapshots in
// test/db/schema-snapshots/; `npm run schema-snapshots` rewrites them.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import type { SensorStorageConfig } from '../../src/config.js';
import { postgresServer, type DatabaseServer } from './db.js';
import { timescaleServer } from './timescale.js';

const run = promisify(execFile);

/** One way a new database is built: a server and the sensor settings it is migrated with. */
export interface SnapshotCase {
  /** the snapshot's file name in test/db/schema-snapshots/, without .sql */
  name: string;
  server: DatabaseServer;
  settings: SensorStorageConfig;
}

export const SNAPSHOT_CASES: SnapshotCase[] = [
  { name: 'postgres', server: postgresServer, settings: { sensorStorage: 'postgres', sensorRetentionDays: null } },
  { name: 'timescale', server: timescaleServer, settings: { sensorStorage: 'timescale', sensorRetentionDays: null } },
  // retention changes the timescale profile's policies (003 and 004)
  { name: 'timescale-retention-45', server: timescaleServer, settings: { sensorStorage: 'timescale', sensorRetentionDays: 45 } },
];

export const snapshotFile = (name: string) => new URL(`../db/schema-snapshots/${name}.sql`, import.meta.url);

/** pg_dump of the same major version as the servers (PG_DUMP to use another binary). */
const pgDump = process.env.PG_DUMP ?? 'pg_dump';

/** The snapshot of the database at `url`. */
export async function schemaSnapshot(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const timescale = (await client.query("SELECT 1 FROM pg_extension WHERE extname = 'timescaledb'")).rowCount === 1;
    const schemas = timescale ? ['public', '_timescaledb_internal'] : ['public'];
    const { stdout } = await run(
      pgDump,
      ['--schema-only', '--no-owner', '--no-privileges', ...schemas.flatMap((schema) => ['-n', schema]), `--dbname=${url}`],
      { maxBuffer: 64 * 1024 * 1024 },
    );
    const sections = [normaliseDump(stdout)];
    for (const [title, sql] of [...ROWS, ...(timescale ? TIMESCALE_CATALOG : [])]) {
      const { rows } = await client.query(sql);
      sections.push([`-- ${title}`, ...rows.map((row) => JSON.stringify(row))].join('\n'));
    }
    return renumberInternalTables(`${sections.join('\n\n')}\n`);
  } finally {
    await client.end();
  }
}

/**
 * TimescaleDB's internal tables (`_compressed_hypertable_<id>`, `_materialized_hypertable_<id>`)
 * numbered 1, 2, ... in the order of their ids: the ids come from a catalog sequence, which a
 * statement rolled back and retried during a migration (under load, in CI) advances, so the same
 * schema can carry other ids. How many such tables there are, and which is which, still counts.
 */
export function renumberInternalTables(snapshot: string): string {
  let renumbered = snapshot;
  for (const kind of ['compressed', 'materialized']) {
    const pattern = new RegExp(`_${kind}_hypertable_(\\d+)`, 'g');
    const ids = [...new Set([...snapshot.matchAll(pattern)].map((match) => Number(match[1])))].sort((a, b) => a - b);
    const ordinal = new Map(ids.map((id, index) => [id, index + 1]));
    renumbered = renumbered.replace(pattern, (_, id: string) => `_${kind}_hypertable_<${ordinal.get(Number(id))}>`);
  }
  return renumbered;
}

/** What the migrations write besides the schema. */
const ROWS: Array<[string, string]> = [
  ['sensor_storage', 'SELECT profile, retention::text FROM sensor_storage'],
  ['pgmigrations', 'SELECT name FROM pgmigrations ORDER BY id'],
  // the postgres profile's weekly partitions around the migration's now() (their names are dates:
  // the dump shows one of them, normalised)
  ['weekly partitions', "SELECT count(*)::int AS partitions FROM pg_class WHERE relname ~ '^sensor_readings_p\\d{8}$'"],
];

/** TimescaleDB's catalog of the store, without ids or times that differ from one database to the next. */
const TIMESCALE_CATALOG: Array<[string, string]> = [
  [
    'timescaledb_information.dimensions',
    `
    SELECT hypertable_schema, hypertable_name, column_name, dimension_type, time_interval::text
    FROM timescaledb_information.dimensions ORDER BY hypertable_schema, hypertable_name, dimension_number`,
  ],
  [
    'timescaledb_information.hypertables',
    `
    SELECT hypertable_schema, hypertable_name, num_dimensions, compression_enabled
    FROM timescaledb_information.hypertables ORDER BY hypertable_schema, hypertable_name`,
  ],
  [
    'timescaledb_information.continuous_aggregates',
    `
    SELECT view_name, hypertable_name, materialized_only, compression_enabled, materialization_hypertable_name, view_definition
    FROM timescaledb_information.continuous_aggregates ORDER BY view_name`,
  ],
  [
    'timescaledb_information.hypertable_columnstore_settings',
    `
    SELECT hypertable::text, segmentby, orderby, index FROM timescaledb_information.hypertable_columnstore_settings ORDER BY 1`,
  ],
  // the store's policies; the server's own jobs (telemetry, job history) are not the migrations'
  [
    'timescaledb_information.jobs',
    `
    SELECT proc_name, hypertable_name, schedule_interval::text, max_runtime::text, max_retries, retry_period::text,
           scheduled, fixed_schedule, config, check_name
    FROM timescaledb_information.jobs WHERE hypertable_name IS NOT NULL ORDER BY hypertable_name, proc_name, config::text`,
  ],
];

/**
 * pg_dump's text without what differs between two dumps of the same schema: the preamble and its
 * SET lines, the \restrict key (random per dump), the entries' header comments, and the weekly
 * partitions' dates (one entry is kept for each shape of partition entry).
 */
export function normaliseDump(dump: string): string {
  const body = dump
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line) && !/^SET \w+ = .*;$/.test(line) && !line.startsWith('SELECT pg_catalog.set_config('))
    .join('\n');
  // every object is an entry headed "--\n-- Name: ...; Type: ...; Schema: ...; Owner: -\n--"
  const entries = body
    .split(/^--\n-- Name: .*\n--\n/m)
    .slice(1)
    .map((entry) =>
      entry
        .replace(/--\n-- PostgreSQL database dump complete\n--\s*$/, '')
        .replace(/sensor_readings_p\d{8}/g, 'sensor_readings_p<week>')
        .replace(/FOR VALUES FROM \('[^']*'\) TO \('[^']*'\)/g, "FOR VALUES FROM ('<week>') TO ('<week + 7 days>')")
        .trim(),
    );
  return [...new Set(entries)].join('\n\n');
}
