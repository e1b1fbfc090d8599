// A pooled connection PostgreSQL ends while it is idle (a restart, a fast shutdown, an operator's
// pg_terminate_backend) is one short warning line: pg-pool hangs the whole pg client on the error,
// which the service's err serializer leaves out (src/logging.ts), keeping the message, the code
// and the stack.
import { Writable } from 'node:stream';
import pino from 'pino';
import t from 'tap';
import { createPool } from '../../src/db/pool.js';
import { loggerOptions } from '../../src/logging.js';
import { adminUrl } from '../helpers/db.js';

t.test("an idle client's connection ended by the server: the error logged without the client", async (t) => {
  const lines: string[] = [];
  const logger = pino(
    loggerOptions('info'),
    new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }),
  );
  const pool = createPool(adminUrl, 2, { onError: (error) => logger.warn({ err: error }, 'idle database client failed') });
  t.teardown(() => pool.end());
  const [idle, other] = [await pool.connect(), await pool.connect()];
  const { rows } = await idle.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  idle.release();
  const failed = new Promise<Error>((resolve) => pool.once('error', resolve));
  // from the other connection: the idle one is what ends
  await other.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
  other.release();
  const error = await failed;
  t.ok((error as Error & { client?: unknown }).client, 'pg-pool hangs the client on the error (what the serializer leaves out)');
  await new Promise((resolve) => setImmediate(resolve));
  const line = lines.find((text) => text.includes('idle database client failed'));
  t.ok(line, 'the warning is logged');
  const logged = JSON.parse(line!) as { err: Record<string, unknown> };
  t.match(logged.err, { type: 'DatabaseError', message: /terminating connection/, code: '57P01' }, 'message and code kept');
  t.match(logged.err.stack, /terminating connection/, 'the stack kept');
  t.notOk('client' in logged.err, 'no client');
  t.ok(line!.length < 4000, `one short line (${line!.length} bytes)`);
  t.notMatch(line!, /parsedStatements|connectionParameters/, 'no connection settings or statements');
});
