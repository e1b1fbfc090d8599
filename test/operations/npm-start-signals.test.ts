// `npm start` is how people run the service: a signal sent to npm's pid must reach the service
// (the start script execs node, so no shell sits between them) and stop it gracefully.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { createTestDatabase } from '../helpers/db.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { freePort, send, until } from './harness.js';

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
