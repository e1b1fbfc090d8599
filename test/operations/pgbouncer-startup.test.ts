// Start-up and `npm run migrate` behind PgBouncer (Debian's 1.18) on a private PostgreSQL 15, as
// an SRE meets them: what does not work stops with one line naming the setting to change, and the
// migrations' lock never stays behind.
//   - DATABASE_URL through a transaction-mode PgBouncer without DB_POOLER (the README's old advice:
//     only DB_PREPARED_STATEMENTS=off): PgBouncer refuses the start-up parameters; start-up stops
//     with one line naming DB_POOLER. The same PgBouncer told to drop them (ignore_startup_parameters):
//     the line says they were lost.
//   - DATABASE_SESSION_URL through the transaction-mode PgBouncer: the migrations need a session;
//     start-up and `npm run migrate` stop with one line naming DATABASE_SESSION_URL.
//   - five `npm run migrate` in a row through the transaction-mode PgBouncer: each stops with that
//     line within seconds, and no advisory lock is left in pg_locks; five through a session-mode
//     PgBouncer (and two at once): the first applies everything, the others find nothing to do,
//     and no advisory lock is left.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import pg from 'pg';
import t from 'tap';
import { migrationsDir } from '../../src/db/migrate.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { nodeArgs, repoRoot } from '../helpers/entry.js';
import { startPrivatePostgres } from '../helpers/pg-private.js';
import { startPgBouncer } from '../helpers/pgbouncer.js';
import { reapOnExit } from '../helpers/reaper.js';

const MIGRATIONS = readdirSync(migrationsDir).filter((file) => /\.(js|sql)$/.test(file)).length;
const server = await startPrivatePostgres(t);
const [transaction, dropping, session] = await Promise.all([
  startPgBouncer(t, { serverPort: server.port, poolMode: 'transaction', defaultPoolSize: 4 }),
  startPgBouncer(t, {
    serverPort: server.port,
    poolMode: 'transaction',
    defaultPoolSize: 4,
    ignoreStartupParameters: ['options', 'statement_timeout'],
  }),
  startPgBouncer(t, { serverPort: server.port, poolMode: 'session', defaultPoolSize: 4 }),
]);

interface Run {
  status: number | null;
  ms: number;
  stdout: string;
  /** stderr's non-empty lines */
  lines: string[];
}

/** Runs a program of the service (`src/main.ts`, `src/cli/migrate.ts`) to its end, or kills it after timeoutMs. */
function run(entry: string, env: Record<string, string>, timeoutMs = 30_000): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = reapOnExit(
      execFile(
        process.execPath,
        nodeArgs(entry),
        {
          cwd: repoRoot,
          env: {
            PATH: process.env.PATH ?? '',
            HOST: '127.0.0.1',
            PORT: '0',
            WORKERS: '1',
            JWT_SECRET: TEST_JWT_SECRET,
            DB_STARTUP_WAIT_SECONDS: '10',
            ...env,
          },
          timeout: timeoutMs,
          killSignal: 'SIGKILL',
        },
        (error, stdout, stderr) =>
          resolve({
            status: error ? (typeof error.code === 'number' ? error.code : null) : 0,
            ms: performance.now() - started,
            stdout,
            lines: stderr.split('\n').filter((line) => line.trim() !== ''),
          }),
      ),
    );
    child.stdin?.end();
  });
}

const advisoryLocks = async (database: string) =>
  Number(
    (
      await server.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = $1)",
        [database],
      )
    )[0]!.n,
  );

t.test("the README's old settings (DATABASE_URL through the pooler, DB_PREPARED_STATEMENTS=off): one line naming DB_POOLER", async (t) => {
  const { name } = await server.createDatabase();
  const started = await run('src/main.ts', { DATABASE_URL: transaction.url(name), DB_PREPARED_STATEMENTS: 'off' });
  t.equal(started.status, 1, 'start-up stops');
  t.equal(started.lines.length, 1, `one line: ${started.lines.join(' | ')}`);
  t.match(
    started.lines[0],
    /^Invalid configuration: DATABASE_URL refused the connections' start-up parameters \("unsupported startup parameter: \w+"\): .*set DB_POOLER=transaction and DATABASE_SESSION_URL/,
  );
});

t.test('the same pooler dropping the parameters (ignore_startup_parameters): one line naming DB_POOLER', async (t) => {
  const { name } = await server.createDatabase();
  const started = await run('src/main.ts', { DATABASE_URL: dropping.url(name), DB_PREPARED_STATEMENTS: 'off' });
  t.equal(started.status, 1, 'start-up stops');
  t.equal(started.lines.length, 1, `one line: ${started.lines.join(' | ')}`);
  t.match(
    started.lines[0],
    /^Invalid configuration: DATABASE_URL's connections lost their start-up parameters \(statement_timeout 0 ms, not 9000; .*\): a pooler drops them .*set DB_POOLER=transaction/,
  );
});

const NOT_A_SESSION =
  /^(Invalid configuration|migrate failed): the migrations need a session, and the session connection \(DATABASE_SESSION_URL, else DATABASE_URL\) does not keep one: .*set DATABASE_SESSION_URL to PostgreSQL itself or to a session-mode pool/;

t.test(
  'DB_POOLER=transaction with DATABASE_SESSION_URL through the transaction pooler too: one line naming DATABASE_SESSION_URL',
  async (t) => {
    const { name } = await server.createDatabase();
    const started = await run('src/main.ts', {
      DATABASE_URL: transaction.url(name),
      DATABASE_SESSION_URL: transaction.url(name),
      DB_POOLER: 'transaction',
    });
    t.equal(started.status, 1, 'start-up stops');
    t.match(started.lines.at(-1), NOT_A_SESSION, String(started.lines.at(-1)));
    // before it, only the advice on jit (the server's default is on; docs/operations.md says to turn it off)
    t.match(
      started.lines.slice(0, -1),
      [/^DATABASE_URL: jit is on .*ALTER DATABASE \w+ SET jit = off/],
      started.lines.slice(0, -1).join(' | '),
    );
    t.ok(started.lines.length <= 2, 'no other line');
    t.equal(await advisoryLocks(name), 0, 'no advisory lock left');
  },
);

t.test('five npm run migrate in a row through the transaction pooler: each stops with one line, no lock left, no hang', async (t) => {
  const { name } = await server.createDatabase();
  for (let i = 1; i <= 5; i++) {
    const migrated = await run('src/cli/migrate.ts', { DATABASE_URL: transaction.url(name) });
    t.equal(migrated.status, 1, `run ${i}: exit 1 after ${Math.round(migrated.ms)} ms`);
    t.ok(migrated.ms < 15_000, `run ${i}: no hang`);
    t.same(migrated.lines.length, 1, `run ${i}: one line`);
    t.match(migrated.lines[0], NOT_A_SESSION);
    t.equal(await advisoryLocks(name), 0, `run ${i}: no advisory lock left`);
  }
  // the same database migrates through a session the moment one is named
  const migrated = await run('src/cli/migrate.ts', { DATABASE_URL: transaction.url(name), DATABASE_SESSION_URL: session.url(name) });
  t.equal(migrated.status, 0, migrated.lines.join(' | '));
  t.match(migrated.stdout, /^applied: 001_core-schema, /);
});

t.test('five npm run migrate in a row, then two at once, through a session-mode pooler: applied once, no lock left', async (t) => {
  const { name } = await server.createDatabase();
  const env = { DATABASE_URL: transaction.url(name), DATABASE_SESSION_URL: session.url(name) };
  for (let i = 1; i <= 5; i++) {
    const migrated = await run('src/cli/migrate.ts', env);
    t.equal(migrated.status, 0, `run ${i}: exit 0 after ${Math.round(migrated.ms)} ms ${migrated.lines.join(' | ')}`);
    t.ok(migrated.ms < 20_000, `run ${i}: no hang`);
    if (i === 1)
      t.match(migrated.stdout, new RegExp(`^applied: (\\w|-)+(, (\\w|-)+){${MIGRATIONS - 1}}\\n$`), `run 1: all ${MIGRATIONS} applied`);
    else t.equal(migrated.stdout, 'database is up to date\n', `run ${i}: nothing to apply`);
    t.equal(await advisoryLocks(name), 0, `run ${i}: no advisory lock left`);
  }
  const both = await Promise.all([run('src/cli/migrate.ts', env), run('src/cli/migrate.ts', env)]);
  t.same(
    both.map((each) => [each.status, each.stdout]),
    [
      [0, 'database is up to date\n'],
      [0, 'database is up to date\n'],
    ],
    'two at once',
  );
  t.equal(await advisoryLocks(name), 0, 'no advisory lock left');
  const client = new pg.Client({ connectionString: server.url(name) });
  await client.connect();
  t.teardown(() => client.end());
  t.equal(
    (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmigrations')).rows[0]!.n,
    MIGRATIONS,
    'each migration recorded once',
  );
});
