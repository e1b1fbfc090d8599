// A throwaway database (coldtrack_bench_<label>_<random>) on the local PostgreSQL or another server,
// dropped on every way out: drop(), a failed create or migration, SIGINT or SIGTERM, process exit.
// WITH (FORCE): TimescaleDB's job scheduler keeps a session in every database with the extension.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';
import type { SensorStorageConfig } from '../../src/config.js';
import { migrate } from '../../src/db/migrate.js';

export const adminUrl = () => process.env.BENCH_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface ThrowawayDatabase {
  name: string;
  url: string;
  /** Drops it. Idempotent: a call while a drop runs shares it; after a failed one, it tries again. */
  drop(): Promise<void>;
}

export interface ThrowawayOptions {
  /** the server's maintenance database, as a superuser (default adminUrl()) */
  adminUrl?: string;
  /** part of the name, to tell whose a leftover was */
  label?: string;
  /** apply the project's migrations with these sensor settings */
  migrate?: SensorStorageConfig;
  /** false: the caller's clean-up drops it after stopping what uses it (the exit hook still backs it up) */
  dropOnSignals?: boolean;
}

interface Live {
  /** the server it is on (its maintenance database) */
  adminUrl: string;
  dropOnSignals: boolean;
  /** CREATE DATABASE is on its way: a DROP now could find nothing */
  creating: boolean;
  /** settles with CREATE and the migrations: a forced drop under a migration would crash the process */
  prepared: Promise<void>;
  dropping: Promise<void> | null;
}

/** Databases created and not yet confirmed dropped, by name. */
const live = new Map<string, Live>();

async function adminQuery(server: string, sql: string) {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const dropSql = (name: string) => `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`;

function drop(name: string): Promise<void> {
  const entry = live.get(name);
  if (!entry) return Promise.resolve();
  entry.dropping ??= entry.prepared
    .then(() => adminQuery(entry.adminUrl, dropSql(name)))
    .then(
      () => {
        live.delete(name);
        releaseSignalsWhenIdle();
      },
      (error: unknown) => {
        entry.dropping = null; // still live: a later drop() or the exit hook tries again
        throw error;
      },
    );
  return entry.dropping;
}

// ---------------------------------------------------------------------------------------------
// Signals and exit

const SIGNALS = { SIGINT: 130, SIGTERM: 143 } as const;
let signalsHeld = false;
let signalled = false;

/** First signal: drop, then exit as the signal would have. A second one: exit now (the exit hook drops). */
function onSignal(signal: keyof typeof SIGNALS) {
  const code = SIGNALS[signal];
  if (signalled) process.exit(code);
  signalled = true;
  // the forced drop cuts the script's open connections: their errors are expected now, and must
  // not end the process before the drop is done (it exits below, with the signal's code)
  process.on('uncaughtException', () => {});
  const mine = [...live].filter(([, entry]) => entry.dropOnSignals).map(([name]) => drop(name));
  void Promise.allSettled(mine).finally(() => process.exit(code));
}

const signalHandlers = { SIGINT: () => onSignal('SIGINT'), SIGTERM: () => onSignal('SIGTERM') };

function holdSignals() {
  if (signalsHeld) return;
  signalsHeld = true;
  for (const signal of Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]) process.on(signal, signalHandlers[signal]);
}

/** Once nothing is left to drop, a signal does what it did before (the script may run on). */
function releaseSignalsWhenIdle() {
  if (!signalsHeld || signalled || [...live.values()].some((entry) => entry.dropOnSignals)) return;
  signalsHeld = false;
  for (const signal of Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]) process.off(signal, signalHandlers[signal]);
}

// 'exit' handlers must be synchronous: a child node process drops what is left (bounded in time).
// A database whose CREATE was still in flight may appear after a first DROP: it is watched for 5 s.
const pgPath = createRequire(import.meta.url).resolve('pg');
const DROP_SCRIPT = `
const { Client } = require(process.env.THROWAWAY_PG);
const client = new Client({ connectionString: process.env.THROWAWAY_ADMIN_URL });
const drop = (name) => client.query('DROP DATABASE IF EXISTS ' + name + ' WITH (FORCE)');
const exists = async (name) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount > 0;
(async () => {
  await client.connect();
  for (const name of JSON.parse(process.env.THROWAWAY_NAMES)) await drop(name);
  let creating = JSON.parse(process.env.THROWAWAY_CREATING);
  for (const deadline = Date.now() + 5000; creating.length > 0 && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const appeared = [];
    for (const name of creating) if (await exists(name)) appeared.push(name);
    for (const name of appeared) await drop(name);
    creating = creating.filter((name) => !appeared.includes(name));
  }
  await client.end();
})().catch((error) => {
  console.error('throwaway database: drop at exit failed: ' + error.message);
  process.exit(1);
});`;

let exitHooked = false;
function hookExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    // one child per server the databases left are on
    for (const server of new Set([...live.values()].map((entry) => entry.adminUrl))) {
      const left = [...live].filter(([, entry]) => entry.adminUrl === server);
      const creating = left.filter(([, entry]) => entry.creating).map(([name]) => name);
      const env = {
        ...process.env,
        THROWAWAY_PG: pgPath,
        THROWAWAY_ADMIN_URL: server,
        THROWAWAY_NAMES: JSON.stringify(left.map(([name]) => name)),
        THROWAWAY_CREATING: JSON.stringify(creating),
      };
      spawnSync(process.execPath, ['-e', DROP_SCRIPT], { env, stdio: ['ignore', 'ignore', 'inherit'], timeout: 20_000 });
    }
  });
}

// ---------------------------------------------------------------------------------------------

/** Creates (and optionally migrates) a database of its own; see the module header for when it is dropped. */
export async function createThrowawayDatabase(options: ThrowawayOptions = {}): Promise<ThrowawayDatabase> {
  const name = ['coldtrack_bench', options.label, randomBytes(4).toString('hex')].filter(Boolean).join('_');
  const server = options.adminUrl ?? adminUrl();
  const url = new URL(server);
  url.pathname = `/${name}`;
  const entry: Live = {
    adminUrl: server,
    dropOnSignals: options.dropOnSignals ?? true,
    creating: true,
    prepared: Promise.resolve(),
    dropping: null,
  };
  // registered before CREATE DATABASE is sent: a signal or exit while it runs still drops it
  live.set(name, entry);
  hookExit();
  if (entry.dropOnSignals) holdSignals();
  const database: ThrowawayDatabase = { name, url: url.toString(), drop: () => drop(name) };
  const preparation = (async () => {
    try {
      await adminQuery(server, `CREATE DATABASE ${name}`);
    } finally {
      entry.creating = false;
    }
    // after a signal the database is only waiting to be dropped: no migration starts on it
    if (options.migrate && !signalled) await migrate(database.url, options.migrate);
  })();
  entry.prepared = preparation.then(
    () => {},
    () => {},
  );
  try {
    await preparation;
  } catch (error) {
    await database.drop().catch(() => {}); // the exit hook tries again
    throw error;
  }
  // the signal handler is dropping it and then exits the process: the caller's work never starts
  if (signalled) return new Promise<never>(() => {});
  return database;
}

/** `body` with a fresh database, dropped when it settles (and on the other ways out, as above). */
export async function withThrowawayDatabase<T>(options: ThrowawayOptions, body: (database: ThrowawayDatabase) => Promise<T>): Promise<T> {
  const database = await createThrowawayDatabase(options);
  try {
    return await body(database);
  } finally {
    await database.drop();
  }
}
