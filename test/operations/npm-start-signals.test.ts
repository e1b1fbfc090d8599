// `npm start` is how people run the service: a signal sent to npm's pid must reach the service
// (the start script execs node, so no shell sits between them) and stop it gracefully. A terminal's
// Ctrl-C signals npm's whole process group: the service gets SIGINT from the terminal and again
// from npm, and must still finish its stop (before, the second SIGINT made it exit at once, or, in
// the moment close-with-grace swapped its handlers, killed it outright with no shutdown line),
// flushing the last request's usage and last_used_at.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { createWorld, freePort, send, until } from './harness.js';

const DATA = '/api/v1/analytics/utilization?page_size=1';

const pinnedNode = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { devDependencies: Record<string, string> }
).devDependencies.node;

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(`${signal} to npm's pid stops the service`, async (t) => {
    const db = await createTestDatabase(t);
    const port = await freePort();
    const npm = spawn('npm', ['start'], {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        JWT_SECRET: TEST_JWT_SECRET,
        PORT: String(port),
        HOST: '127.0.0.1',
        WORKERS: '1',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout.on('data', (chunk) => (output += chunk));
    npm.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    t.teardown(() => npm.kill('SIGKILL'));
    const base = `http://127.0.0.1:${port}`;
    await until('the service to listen', async () => (await send(base, '/healthz').catch(() => null))?.status === 200, 60_000, 200);
    // npm puts node_modules/.bin first on PATH: the service runs on the Node the project pins
    const metrics = await send(base, '/metrics');
    t.match(metrics.body, `nodejs_version_info{version="v${pinnedNode}"`, `npm start runs the service on Node ${pinnedNode}`);

    npm.kill(signal);
    await until(
      'npm to exit',
      async () => (await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 100))])) as boolean,
      20_000,
      10,
    );
    const refused = await send(base, '/healthz', { timeoutMs: 2000 }).then(
      () => false,
      () => true,
    );
    t.ok(refused, 'nothing listens on the port any more: the node process stopped too');
    t.match(output, new RegExp(`"signal":"${signal}".*shutting down`), 'the service logged a graceful shutdown');
  });
}

t.test("Ctrl-C (SIGINT to npm start's process group): a shutdown line, and the last request in usage and last_used_at", async (t) => {
  const world = await createWorld(t);
  const token = await world.issue();
  const port = await freePort();
  const npm = spawn('npm', ['start'], {
    // as a shell has it: nothing of this test process's own hooks (NODE_OPTIONS), which handle signals too
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATABASE_URL: world.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKERS: '1',
      REDIS_URL: '',
      LOG_LEVEL: 'info',
      // only the stop writes: nothing reaches the database on a timer meanwhile
      LAST_USED_FLUSH_SECONDS: '3600',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // a process group of its own, as a terminal gives `npm start`
    detached: true,
  });
  let output = '';
  npm.stdout.on('data', (chunk) => (output += chunk));
  npm.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
  t.teardown(() => {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // the group is gone
    }
  });
  const base = `http://127.0.0.1:${port}`;
  await until('the service to listen', async () => (await send(base, '/healthz').catch(() => null))?.status === 200, 60_000, 200);

  // a client that keeps its connection open, as a browser or an HTTP library does
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  for (let i = 0; i < 3; i++) t.equal((await send(base, DATA, { headers: token.headers, agent })).status, 200);
  await sleep(1100);
  const lastSentAt = Date.now();
  const last = await send(base, DATA, { headers: { ...token.headers, 'user-agent': 'the-last-request/1' }, agent });
  t.equal(last.status, 200, 'the last request');

  // npm forwards the terminal's SIGINT to the service, which gets it a few ms after the terminal's
  // own: whether that echo lands while the service is stopping is a race, so a second one is sent
  // once the stop is surely under way (the kept-alive connection holds it in its drain)
  process.kill(-npm.pid!, 'SIGINT');
  await sleep(150);
  try {
    process.kill(-npm.pid!, 'SIGINT');
  } catch {
    // the group is gone already: the service did not stop gracefully, as the checks below show
  }
  const code = await Promise.race([exited, sleep(25_000).then(() => 'still running after 25 s')]);
  t.not(code, 'still running after 25 s', `npm exited (code ${code})`);
  t.match(output, /"signal":"SIGINT".*shutting down/, 'the service logged its shutdown');
  t.notMatch(output, /second SIGINT|killed by timeout/, 'and did not give it up on the second SIGINT');

  const usage = await world.ctx.db.pool.query<{ requests: number }>(
    'SELECT sum(requests)::int AS requests FROM api_token_usage WHERE api_token_id = $1',
    [token.id],
  );
  t.equal(usage.rows[0]!.requests, 4, 'every request is in the usage, the last one included');
  const client = await world.ctx.db.pool.query<{ user_agent: string }>(
    'SELECT user_agent FROM api_token_last_client WHERE api_token_id = $1',
    [token.id],
  );
  t.equal(client.rows[0]?.user_agent, 'the-last-request/1', "the last client is the last request's");
  const { last_used_at: lastUsedAt } = (
    await world.ctx.db.pool.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_tokens WHERE id = $1', [token.id])
  ).rows[0]!;
  t.ok(lastUsedAt && lastUsedAt.getTime() >= lastSentAt, `last_used_at ${lastUsedAt?.toISOString()} is the last request's`);
});
