// PostgreSQL becomes unreachable for the real cluster (a TCP proxy of this file's own between the
// service and the shared server is cut: the shared server keeps running for the other tests):
// requests that need the database answer 503 `unavailable` with Retry-After, quickly; /readyz is
// 503; no worker crashes; when the proxy opens again the service recovers by itself.
import net from 'node:net';
import t, { type Test } from 'tap';
import { withAdmin } from '../helpers/db.js';
import { createWorld, DATA_PATH, freePort, type Reply, send, startCluster, startRedis, until } from './harness.js';

type Mode = 'open' | 'refusing' | 'black-hole';

/** A TCP proxy to PostgreSQL that the test can cut (refuse) or turn into a black hole. */
class DatabaseProxy {
  private server: net.Server | null = null;
  private sockets = new Set<net.Socket>();
  mode: Mode = 'refusing';

  constructor(
    readonly port: number,
    private readonly upstream: { host: string; port: number },
  ) {}

  private track(socket: net.Socket) {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  }

  async open() {
    this.mode = 'open';
    if (this.server) return;
    const server = net.createServer((client) => {
      this.track(client);
      // a black hole accepts and never answers: the client waits for its own timeout
      if (this.mode === 'black-hole') return;
      const upstream = net.connect(this.upstream.port, this.upstream.host);
      this.track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
  }

  private dropConnections() {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  /** Every connection cut, new ones refused: the database host is down. */
  async refuse() {
    this.mode = 'refusing';
    this.dropConnections();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Every connection cut, new ones accepted and never answered: the network swallows packets. */
  async blackHole() {
    await this.open();
    this.mode = 'black-hole';
    this.dropConnections();
  }
}

const world = await createWorld(t);
const redis = await startRedis(t);
const shared = new URL(world.databaseUrl);
const proxy = new DatabaseProxy(await freePort(), { host: shared.hostname, port: Number(shared.port || 5432) });
await proxy.open();
t.teardown(() => proxy.refuse());
const viaProxy = new URL(world.databaseUrl);
viaProxy.port = String(proxy.port);
const cluster = await startCluster(t, { DATABASE_URL: viaProxy.toString(), REDIS_URL: redis.url });
const base = cluster.baseUrl;

const { headers: tokenHeaders } = await world.issue();
const jwtHeaders = { authorization: `Bearer ${await world.jwt(world.acme.employeeId)}` };

/** The requests that need the database: data (token cached or not), management, the public check. */
async function databaseRequests(): Promise<Array<[string, Reply]>> {
  return Promise.all([
    ...[0, 1, 2, 3].map(async (i) => [`data ${i}`, await send(base, DATA_PATH, { headers: tokenHeaders, timeoutMs: 10_000 })] as [string, Reply]),
    send(base, '/api/v1/api-tokens', { headers: jwtHeaders, timeoutMs: 10_000 }).then((reply) => ['management', reply] as [string, Reply]),
    send(base, '/v1/users/validate-cooling-user-id/', { method: 'POST', body: { cooling_user_id: 'x' }, timeoutMs: 10_000 }).then(
      (reply) => ['validate', reply] as [string, Reply],
    ),
  ]);
}

function checkUnavailable(t: Test, replies: Array<[string, Reply]>, withinMs: number) {
  for (const [name, reply] of replies) {
    t.equal(reply.status, 503, `${name}: 503 (${reply.body.slice(0, 100)})`);
    t.match(reply.body, /"code":"unavailable"/, `${name}: the unavailable error`);
    t.ok(Number(reply.headers['retry-after']) > 0, `${name}: Retry-After ${reply.headers['retry-after']}`);
    t.ok(reply.ms < withinMs, `${name}: answered in ${Math.round(reply.ms)} ms`);
  }
}

async function recovery(t: Test) {
  const reopenedAt = performance.now();
  await proxy.open();
  await until('data requests to succeed again', async () => (await send(base, DATA_PATH, { headers: tokenHeaders })).status === 200, 15_000, 100);
  const recoveredMs = performance.now() - reopenedAt;
  t.comment(`recovered ${Math.round(recoveredMs)} ms after PostgreSQL was reachable again`);
  t.ok(recoveredMs < 5000, 'recovered by itself');
  for (let i = 0; i < 4; i++) {
    t.equal((await send(base, DATA_PATH, { headers: tokenHeaders })).status, 200, `data request ${i} after the recovery (both workers)`);
  }
  t.equal((await send(base, '/api/v1/api-tokens', { headers: jwtHeaders })).status, 200, 'management after the recovery');
  t.equal((await send(base, '/readyz')).status, 200, '/readyz ready again');
}

t.test('warm: everything answers through the proxy', async (t) => {
  for (let i = 0; i < 4; i++) t.equal((await send(base, DATA_PATH, { headers: tokenHeaders })).status, 200);
  t.equal((await send(base, '/readyz')).status, 200);
});

t.test('PostgreSQL down (connections cut, new ones refused): 503 at once, then recovery', async (t) => {
  const workers = cluster.workerPids();
  await proxy.refuse();
  checkUnavailable(t, await databaseRequests(), 4000);
  const ready = await send(base, '/readyz');
  t.equal(ready.status, 503, '/readyz: 503');
  t.same(ready.json().checks, { database: 'unreachable', redis: 'ok' });
  t.equal((await send(base, '/healthz')).status, 200, '/healthz: the process is alive');
  // a while of failing requests (and pool errors) must not take a worker down
  for (let i = 0; i < 5; i++) await databaseRequests();
  t.same(cluster.workerPids().sort(), workers.sort(), 'the same workers are alive');
  t.notMatch(cluster.output(), /died/, 'no worker died');
  await recovery(t);
});

t.test('PostgreSQL silent (connections cut, new ones never answered): 503 within the connect timeout', async (t) => {
  const workers = cluster.workerPids();
  await proxy.blackHole();
  checkUnavailable(t, await databaseRequests(), 4000);
  const ready = await send(base, '/readyz', { timeoutMs: 10_000 });
  t.equal(ready.status, 503, `/readyz: 503 in ${Math.round(ready.ms)} ms`);
  t.same(cluster.workerPids().sort(), workers.sort(), 'the same workers are alive');
  t.notMatch(cluster.output(), /died/, 'no worker died');
  await recovery(t);
});

t.test('database closed for maintenance (ALLOW_CONNECTIONS false, sessions ended): 503, then recovery', async (t) => {
  const database = new URL(world.databaseUrl).pathname.slice(1);
  const allow = (allowed: boolean) => withAdmin((client) => client.query(`ALTER DATABASE ${database} ALLOW_CONNECTIONS ${allowed}`));
  await allow(false);
  try {
    await withAdmin((client) =>
      client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database]));
    // PostgreSQL refuses with 55000 "database ... is not currently accepting connections"
    checkUnavailable(t, await databaseRequests(), 4000);
    t.equal((await send(base, '/readyz')).status, 503, '/readyz: 503');
  } finally {
    await allow(true);
  }
  await recovery(t);
});
