// SIGTERM on the primary: the listener closes at once (new connections are refused), a request in
// flight still completes, last_used_at noted in memory is flushed to the database, and the whole
// cluster exits 0 well within its deadline.
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createWorld, DATA_PATH, send, startCluster, startRedis, until } from './harness.js';

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url });

/** Resolves true when a TCP connection to the port is refused, false when it is accepted. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/**
 * A request held in flight: the headers and half the body go now, the rest when `finish` is
 * called. The server has routed it and waits for its body.
 */
function heldRequest(path: string, headers: Record<string, string>, body: string) {
  const half = Math.floor(body.length / 2);
  let request!: http.ClientRequest;
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request = http.request(
      new URL(path, cluster.baseUrl),
      {
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (reply) => {
        let text = '';
        reply.setEncoding('utf8');
        reply.on('data', (chunk: string) => (text += chunk));
        reply.on('end', () => resolve({ status: reply.statusCode!, body: text }));
      },
    );
    request.on('error', reject);
    request.setTimeout(20_000, () => request.destroy(new Error('held request: no answer')));
  });
  request.write(body.slice(0, half));
  return { response, finish: () => request.end(body.slice(half)) };
}

t.test('SIGTERM drains: in-flight request answered, listener closed, last_used_at flushed, exit 0', async (t) => {
  const { id, headers } = await world.issue();
  const lastUsed = async () =>
    (await world.ctx.db.pool.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [id])).rows[0]!
      .last_used_at;

  const usedAt = Date.now();
  t.equal((await send(cluster.baseUrl, DATA_PATH, { headers })).status, 200, 'the token is used just before the shutdown');
  t.equal(await lastUsed(), null, 'last_used_at is only noted in memory so far (written every 30 s)');

  const jwt = await world.jwt(world.acme.employeeId);
  const held = heldRequest(
    '/api/v1/api-tokens',
    { authorization: `Bearer ${jwt}`, 'x-request-id': 'held-request' },
    JSON.stringify({ name: 'created during the shutdown', scopes: ['users'], cooling_unit_ids: [], expires_at: null }),
  );
  await until('the held request to reach a worker', () => cluster.pidOfRequest('held-request'), 5000);

  const signalledAt = performance.now();
  cluster.signal('SIGTERM');
  const closedMs = await until(
    'new connections to be refused',
    async () => (await refused(cluster.port)) && performance.now() - signalledAt,
    5000,
    25,
  );
  t.comment(`listener closed ${Math.round(closedMs)} ms after SIGTERM`);
  t.equal(cluster.child.exitCode, null, 'the primary is still waiting for the request in flight');

  await sleep(300);
  held.finish();
  const answer = await held.response;
  t.equal(answer.status, 201, `the request in flight completed (${answer.body.slice(0, 80)})`);
  t.ok(await refused(cluster.port), 'still refusing new connections');

  const { code, signal } = await cluster.exited;
  const exitMs = performance.now() - signalledAt;
  t.comment(`cluster exited ${Math.round(exitMs)} ms after SIGTERM`);
  t.equal(code, 0, `exit code 0 (signal ${signal})`);
  t.ok(exitMs < 15_000, 'within the shutdown deadline');
  t.notMatch(cluster.output(), /killed by timeout|died/, 'no worker was forced or counted as crashed');
  t.equal(cluster.workerPids().length, 0, 'no worker left behind');

  const written = await lastUsed();
  t.ok(written, 'last_used_at was flushed on shutdown');
  t.ok(written && Math.abs(written.getTime() - usedAt) < 5000, `last_used_at ${written?.toISOString()} is the time of use`);
  const { rows } = await world.ctx.db.pool.query("SELECT 1 FROM api_tokens WHERE name = 'created during the shutdown'");
  t.equal(rows.length, 1, 'the token created by the request in flight is in the database');
});
