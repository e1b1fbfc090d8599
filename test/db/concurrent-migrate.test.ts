// Several instances started together (a rolling deploy, a scaled-out set) each migrate the same
// database at start-up: all of them must come up, and each migration must run exactly once.
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t from 'tap';
import { PG_MIGRATE_LOCK_ID } from 'node-pg-migrate';
import { migrate, migrationsDir } from '../../src/db/migrate.js';
import { createEmptyDatabase } from '../helpers/db.js';

const { url } = await createEmptyDatabase(t);
// the local server's profile, asked for by name (as its test template is migrated)
const sensor = { sensorStorage: 'postgres', sensorRetentionDays: null } as const;
const migrations = readdirSync(migrationsDir).filter((file) => /\.(js|sql)$/.test(file)).length;

t.test('four migrations of one empty database at once: all succeed, each migration applied once', async (t) => {
  const outcomes = await Promise.allSettled([migrate(url, sensor), migrate(url, sensor), migrate(url, sensor), migrate(url, sensor)]);
  const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
  t.same(failures, [], 'none failed (the later ones wait for the advisory lock)');
  const applied = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []));
  t.equal(applied.length, migrations, `${migrations} migrations applied in total, by whichever got the lock first`);
  t.equal(new Set(applied).size, applied.length, 'none twice');

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  const { rows } = await client.query<{ runs: number }>('SELECT count(*)::int AS runs FROM pgmigrations');
  t.equal(rows[0]!.runs, migrations, 'pgmigrations holds one row per migration');
  t.same(await migrate(url, sensor), [], 'a later start finds nothing to apply');
});

// A migration that meets another session in a deadlock (in the field: one of TimescaleDB's jobs,
// started the moment an earlier migration committed its policy) is rolled back by PostgreSQL; the
// run tries again from it rather than failing start-up. Built here with a real deadlock: another
// session holds SHARE on pgmigrations (the migration's closing INSERT waits for it), then creates a
// table the migration has created and not committed (it waits for the migration's transaction).
t.test('a migration that loses a deadlock is tried again, and the run completes', async (t) => {
  const { name, url } = await createEmptyDatabase(t);
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  t.teardown(() => other.end());
  await other.query('CREATE TABLE pgmigrations (id serial PRIMARY KEY, name varchar(255) NOT NULL, run_on timestamp NOT NULL)');
  // the migration waits first, so its deadlock check (3 s into its wait, once) runs first and
  // picks it as the victim, provided this session is waiting by then: 3 s leaves a busy machine
  // time to send that one query; this session's own check would come only after a minute
  await other.query(`ALTER DATABASE ${name} SET deadlock_timeout = '3s'`);
  await other.query("SET deadlock_timeout = '60s'");
  await other.query('BEGIN');
  await other.query('LOCK TABLE pgmigrations IN SHARE MODE');

  const lines: string[] = [];
  const run = migrate(url, sensor, (line) => lines.push(line));
  for (let waited = 0; ; waited += 50) {
    const { rows } = await other.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_locks WHERE relation = 'pgmigrations'::regclass AND NOT granted",
    );
    if (rows[0]!.n > 0) break;
    if (waited > 20_000) throw new Error('the migration never reached its INSERT into pgmigrations');
    await sleep(50);
  }
  // 001 created companies and has not committed: this waits for the migration's transaction,
  // and goes through once the migration has been picked as the victim and rolled back
  await other.query('CREATE TABLE companies (id integer)');
  await other.query('ROLLBACK');

  const applied = await run;
  t.equal(applied.length, migrations, 'every migration applied');
  t.equal(new Set(applied).size, applied.length, 'none twice');
  t.match(lines.join('\n'), /migration try 1 was rolled back \(deadlock detected\); trying again/, 'the retry is logged');
  const { rows } = await other.query<{ runs: number; units: boolean }>(
    "SELECT count(*)::int AS runs, to_regclass('cooling_units') IS NOT NULL AS units FROM pgmigrations",
  );
  t.same(rows[0], { runs: migrations, units: true }, 'pgmigrations holds one row per migration, and the schema is there');
});

const ADVISORY_LOCKS =
  "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";

// The lock is a transaction lock held by a connection of the migrator's own: nothing of it stays
// once migrate() has returned or failed.
t.test('migrate leaves no advisory lock behind, after applying and after finding nothing to apply', async (t) => {
  const { url } = await createEmptyDatabase(t);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  t.equal((await migrate(url, sensor)).length, migrations, 'applied');
  t.equal((await client.query<{ n: number }>(ADVISORY_LOCKS)).rows[0]!.n, 0, 'no advisory lock after applying');
  t.same(await migrate(url, sensor), [], 'nothing left to apply');
  t.equal((await client.query<{ n: number }>(ADVISORY_LOCKS)).rows[0]!.n, 0, 'none after the second run either');
});

// What a pooled connection that kept an older migrator's session lock looks like to the next
// migrate: it says who holds the lock, waits a bounded time, and fails with one line naming the
// holder instead of hanging with nothing printed.
t.test('a lock held elsewhere: one line naming its holder, then a bounded wait and one line to fail with', async (t) => {
  const { url } = await createEmptyDatabase(t);
  const holder = new pg.Client({ connectionString: url, application_name: 'left-behind' });
  await holder.connect();
  t.teardown(() => holder.end());
  const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  await holder.query('SELECT pg_advisory_lock($1)', [PG_MIGRATE_LOCK_ID]);

  const lines: string[] = [];
  const started = Date.now();
  const error = await migrate(url, sensor, { log: (line) => lines.push(line), lockWaitMs: 2500 }).then(
    () => null,
    (caught: Error) => caught,
  );
  const waited = Date.now() - started;
  t.ok(error, 'migrate fails');
  t.match(
    error?.message,
    new RegExp(
      `^the migrations' lock \\(advisory lock \\d+\\) is still held after \\d+ s by backend pid ${pid} \\(application "left-behind"`,
    ),
    String(error?.message),
  );
  t.match(error?.message, new RegExp(`pg_terminate_backend\\(${pid}\\)`), 'and how to end it');
  t.notMatch(error?.message, /\n/, 'one line');
  t.ok(waited >= 2500 && waited < 10_000, `gave up after ${waited} ms (bound 2.5 s)`);
  t.equal(
    lines.filter((line) => line.startsWith("waiting for the migrations' lock, held by backend pid " + pid)).length,
    1,
    `one line while waiting: ${lines.join(' | ')}`,
  );

  await holder.query('SELECT pg_advisory_unlock_all()');
  t.equal((await migrate(url, sensor)).length, migrations, 'once it is let go, migrate applies everything');
});
