// A TimescaleDB database for the timescale storage profile's tests: PGlite (PostgreSQL in WASM)
// with the timescaledb extension, served over the wire protocol inside the test process, migrated
// with SENSOR_STORAGE=timescale. PGlite is one backend: pglite-socket multiplexes connections
// onto it, query by query, holding others back while one is inside a transaction. The pool has
// two connections because the app sometimes queries the pool while still holding a client
// (createToken reads the token back before releasing its client): one would wait forever.
// Its wire protocol cannot run COPY FROM STDIN (the WASM backend aborts), which is why the
// ingest has an INSERT transport (src/sensors/ingest.ts) that these tests use.
import { PGlite } from '@electric-sql/pglite';
import { timescaledb } from '@electric-sql/pglite/timescaledb';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import type { TestDatabase } from './db.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function createTimescaleDatabase(t: Teardown): Promise<TestDatabase> {
  const db = await PGlite.create({ extensions: { timescaledb } });
  // room for the pool's two and the migration runner's connection, which may still be closing
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 4 });
  await server.start();
  const url = `postgres://postgres@${server.getServerConn()}/postgres`;

  const requested = process.env.SENSOR_STORAGE;
  process.env.SENSOR_STORAGE = 'timescale';
  try {
    await migrate(url);
  } finally {
    if (requested === undefined) delete process.env.SENSOR_STORAGE;
    else process.env.SENSOR_STORAGE = requested;
  }

  const pool = createPool(url, 2, () => {});
  t.teardown(async () => {
    await pool.end();
    await server.stop();
    await db.close();
  });
  return { name: 'pglite_timescale', url, pool };
}
