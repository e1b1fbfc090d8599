// The reference the benchmark compares the project with: the least a Fastify service can do to
// answer the same requests with the same I/O. Per data request: one Redis rate-limit script (the
// project's fixed-window Lua, rate-limit.ts), the project's own SQL (read from sql/queries/*.sql,
// the text, not the code), rows turned into JSON by JSON.stringify; tokens and unit lists cached
// in process as the project caches them. No validation beyond what the queries need, no OpenAPI,
// no metrics, no worker threads (revenue/impact are summed on the event loop), no revocation
// check, no logging. It imports nothing from src/: it is the floor, not a second implementation.
//
// This file is the entry: a node:cluster primary forking WORKERS workers (default 2) like the
// project, each serving worker.ts; a worker that dies stops the whole cluster.
import cluster from 'node:cluster';
import { serveWorker } from './worker.js';

if (cluster.isPrimary) {
  const workers = Number(process.env.WORKERS ?? 2);
  for (let i = 0; i < workers; i++) cluster.fork();
  let stopping = false;
  const stop = () => {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(() => process.exit(0), 5000).unref();
  };
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      console.error(`reference worker ${worker.process.pid} died (${signal ?? code}); stopping`);
      stop();
    } else if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  await serveWorker();
}
