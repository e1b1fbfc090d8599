// Which storage profile `npm run migrate` (src/cli/migrate.ts, the real process) gives a new
// database, against the real servers: the local PostgreSQL lists TimescaleDB without preloading
// it (postgres profile, with one line saying why; SENSOR_STORAGE=timescale there is one line of
// invalid configuration), the TimescaleDB server gets the timescale profile, SENSOR_RETENTION_DAYS
// is recorded, and a bad SENSOR_STORAGE or SENSOR_RETENTION_DAYS or an unreachable server fail
// with one line, never a stack trace.
import { readdirSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import t, { type Test } from 'tap';
import { createEmptyDatabase, postgresServer, type DatabaseServer } from '../helpers/db.js';
import { timescaleServer } from '../helpers/timescale.js';
import { nodeArgs } from '../helpers/entry.js';

/** Every migration of sql/migrations, in order, as node-pg-migrate names them (not the folders of their SQL). */
const MIGRATIONS = readdirSync(new URL('../../sql/migrations/', import.meta.url))
  .filter((file) => /\.(sql|js)$/.test(file))
  .map((file) => file.replace(/\.(sql|js)$/, ''))
  .sort();

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  status: number;
  stdout: string;
  /** stderr's non-empty lines */
  lines: string[];
}

function migrate(databaseUrl: string, sensorStorage?: string, retentionDays?: string): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl };
  delete env.SENSOR_STORAGE;
  delete env.SENSOR_RETENTION_DAYS;
  if (sensorStorage !== undefined) env.SENSOR_STORAGE = sensorStorage;
  if (retentionDays !== undefined) env.SENSOR_RETENTION_DAYS = retentionDays;
  return new Promise((resolve) => {
    execFile(process.execPath, nodeArgs('src/cli/migrate.ts'), { cwd: repoRoot, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, lines: stderr.split('\n').filter((line) => line.trim() !== '') }),
    );
  });
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

const profileOf = async (url: string) =>
  (await query<{ profile: string }>(url, 'SELECT profile FROM sensor_storage')).map((row) => row.profile);

function oneLineFailure(t: Test, run: Run, label: string) {
  t.equal(run.status, 1, `${label}: exit 1`);
  t.equal(run.lines.length, 1, `${label}: exactly one line on stderr (${JSON.stringify(run.lines)})`);
  t.notOk(
    run.lines.some((line) => line.startsWith('    at ')),
    `${label}: no stack trace`,
  );
}

const fresh = (t: Test, server: DatabaseServer) => createEmptyDatabase(t, server);

t.test('the local PostgreSQL lists TimescaleDB without preloading it', async (t) => {
  const [state] = await query<{ available: boolean; preload: string }>(
    postgresServer.adminUrl,
    `
    SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb') AS available,
           current_setting('shared_preload_libraries') AS preload`,
  );
  t.same(
    [state!.available, /timescaledb/.test(state!.preload)],
    [true, false],
    'the premise of the next two tests: timescaledb offered, not in shared_preload_libraries',
  );

  await t.test('SENSOR_STORAGE unset: the postgres profile, and one line saying why', async (t) => {
    const { url } = await fresh(t, postgresServer);
    const run = await migrate(url);
    t.equal(run.status, 0, 'exit 0');
    t.equal(run.stdout.trim(), `applied: ${MIGRATIONS.join(', ')}`, 'every migration applied');
    t.same(await profileOf(url), ['postgres'], 'SELECT profile FROM sensor_storage: postgres');
    t.equal(run.lines.length, 1, `exactly one line on stderr (${JSON.stringify(run.lines)})`);
    t.match(run.lines[0], /shared_preload_libraries/, 'naming shared_preload_libraries');
    t.match(run.lines[0], /postgres storage profile/, 'and the profile it chose');
  });

  await t.test('SENSOR_STORAGE=timescale: one line of invalid configuration, nothing of the store created', async (t) => {
    const { url } = await fresh(t, postgresServer);
    const run = await migrate(url, 'timescale');
    oneLineFailure(t, run, 'SENSOR_STORAGE=timescale');
    t.match(run.lines[0], /^Invalid configuration: /, 'starts with Invalid configuration:');
    t.match(run.lines[0], /shared_preload_libraries/, 'names shared_preload_libraries');
    t.same(
      await query(url, "SELECT to_regclass('sensor_storage') AS storage, to_regclass('sensor_readings_hourly') AS hourly"),
      [{ storage: null, hourly: null }],
      'no sensor store (003 not applied)',
    );
    const again = await migrate(url);
    t.equal(again.status, 0, 'migrating again without SENSOR_STORAGE completes');
    t.same(await profileOf(url), ['postgres']);
  });
});

t.test('the TimescaleDB server: the timescale profile', async (t) => {
  const { url } = await fresh(t, timescaleServer);
  const run = await migrate(url);
  t.equal(run.status, 0, 'exit 0');
  t.same(run.lines, [], 'nothing on stderr');
  t.same(await profileOf(url), ['timescale'], 'SELECT profile FROM sensor_storage: timescale');
  t.same(
    await query(url, "SELECT count(*)::int AS n FROM timescaledb_information.hypertables WHERE hypertable_name = 'sensor_readings'"),
    [{ n: 1 }],
    'sensor_readings is a hypertable',
  );

  const { url: chosen } = await fresh(t, timescaleServer);
  t.equal((await migrate(chosen, 'postgres')).status, 0, 'SENSOR_STORAGE=postgres there: exit 0');
  t.same(await profileOf(chosen), ['postgres'], 'and the postgres profile, as asked');
});

t.test('SENSOR_STORAGE=bogus: one line of invalid configuration', async (t) => {
  for (const server of [postgresServer, timescaleServer]) {
    const { url } = await fresh(t, server);
    const run = await migrate(url, 'bogus');
    oneLineFailure(t, run, `${server.profile} server`);
    t.equal(run.lines[0], 'Invalid configuration: SENSOR_STORAGE must be timescale or postgres, not "bogus"');
    t.same(await query(url, "SELECT to_regclass('sensor_storage') AS storage"), [{ storage: null }], 'no sensor store');
  }
});

t.test('SENSOR_RETENTION_DAYS reaches the migration through src/config.ts', async (t) => {
  const { url } = await fresh(t, postgresServer);
  const refused = await migrate(url, 'postgres', '7');
  oneLineFailure(t, refused, 'SENSOR_RETENTION_DAYS=7');
  t.equal(refused.lines[0], 'Invalid configuration: SENSOR_RETENTION_DAYS must be a whole number of days, at least 30');
  t.same(await query(url, "SELECT to_regclass('pgmigrations') AS migrations"), [{ migrations: null }], 'checked before any migration ran');

  const run = await migrate(url, 'postgres', '60');
  t.equal(run.status, 0, 'SENSOR_RETENTION_DAYS=60: exit 0');
  t.same(
    await query(url, 'SELECT profile, retention::text FROM sensor_storage'),
    [{ profile: 'postgres', retention: '60 days' }],
    'recorded in sensor_storage',
  );
});

t.test('an unreachable database: exit 1, one line', async (t) => {
  // a port that was just free on loopback: nothing listens there
  const port = await new Promise<number>((resolve, reject) => {
    const server = createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      })
      .on('error', reject);
  });
  const run = await migrate(`postgres://postgres@127.0.0.1:${port}/coldtrack`);
  oneLineFailure(t, run, 'closed port');
  t.match(run.lines[0], /^migrate failed: .*ECONNREFUSED/, 'says it could not connect');
});
