// The stock of test databases (test/helpers/database-stock.ts says why), kept by test/run.mjs
// beside tap while the test files run: clones of the local server's migrated template, STOCK_SIZE
// ready at a time, and the databases the files are done with, dropped. On SIGTERM (the run is
// over: its input ends) it drops what is left of both and exits.
//   COLDTRACK_TEST_DATABASE_STOCK=RUN node --import ./test/setup/prebuilt.mjs test/setup/database-stock.ts
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { stockPrefix, trashPrefix } from '../helpers/database-stock.js';
import { checkout, postgresServer } from '../helpers/db.js';

// a file claims its clone as it starts: tap's jobs, and a file or two that clones twice
const STOCK_SIZE = 6;
// clones and drops wait on the server's checkpoints and file syncs, not on its CPU: a few at once
// take little longer than one
const AT_ONCE = { clones: 3, drops: 2 };

const admin = new pg.Pool({ connectionString: postgresServer.adminUrl, max: AT_ONCE.clones + AT_ONCE.drops + 1 });
// a server restart or a refused statement must not end the stock: the files clone their own then
admin.on('error', () => {});
const cloning = new Set<string>();
const dropping = new Set<string>();
const made = new Set<string>();
let stopping = false;

/** The names on the server that start with `prefix`. */
const databasesLike = async (prefix: string) =>
  (await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix])).rows.map(
    (row) => row.datname,
  );

const drop = (name: string) => {
  dropping.add(name);
  return admin
    .query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    .catch(() => {})
    .finally(() => dropping.delete(name));
};

async function keep(): Promise<void> {
  const { rows } = await admin.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = $1 AND datistemplate', [
    postgresServer.templateName,
  ]);
  const template = rows[0];
  // clones of an older template (a run of this checkout that rebuilt it) are of no use
  for (const name of await databasesLike(stockPrefix(checkout))) {
    if (!template || !name.startsWith(`${stockPrefix(checkout)}${template.oid}_`)) {
      if (!dropping.has(name)) void drop(name);
    }
  }
  for (const name of await databasesLike(trashPrefix(checkout))) {
    if (dropping.size < AT_ONCE.drops && !dropping.has(name)) void drop(name);
  }
  if (!template) return;
  const ready = (await databasesLike(`${stockPrefix(checkout)}${template.oid}_`)).length;
  for (let missing = STOCK_SIZE - ready - cloning.size; missing > 0 && cloning.size < AT_ONCE.clones; missing--) {
    const name = `${stockPrefix(checkout)}${template.oid}_${randomBytes(4).toString('hex')}`;
    cloning.add(name);
    made.add(name);
    void admin
      .query(`CREATE DATABASE ${name} TEMPLATE ${postgresServer.templateName} STRATEGY FILE_COPY`)
      .catch(() => made.delete(name))
      .finally(() => cloning.delete(name));
  }
}

// test/run.mjs ends its input when the run is over; a signal, or the runner gone, ends it too
const stop = () => (stopping = true);
process.stdin.on('end', stop).on('error', stop).resume();
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, stop);
while (!stopping) {
  await keep().catch(() => {});
  await sleep(100);
}
while (cloning.size > 0) await sleep(50);
// this process's clones nobody claimed, and every file's database it has not dropped yet
const left = new Set([
  ...(await databasesLike(trashPrefix(checkout))),
  ...(await databasesLike(stockPrefix(checkout))).filter((name) => made.has(name)),
]);
await Promise.all([...left].filter((name) => !dropping.has(name)).map(drop));
while (dropping.size > 0) await sleep(50);
await admin.end();
