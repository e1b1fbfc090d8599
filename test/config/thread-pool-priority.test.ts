// THREAD_POOL_NICE: read (0 unless set), and applied to this process's libuv thread pool only:
// each pool thread gets the nice value, the event loop's thread keeps its own.
import t from 'tap';
import { loadConfig } from '../../src/config.js';
import { lowerThreadPoolPriority } from '../../src/thread-pool-priority.js';
import { threads } from '../helpers/threads.js';

const base = { DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', JWT_SECRET: 'x'.repeat(32) };

t.test('THREAD_POOL_NICE is 0 (the process priority) unless set', async (t) => {
  t.equal(loadConfig(base).threadPoolNice, 0);
  t.equal(loadConfig({ ...base, THREAD_POOL_NICE: '10' }).threadPoolNice, 10);
});

t.test('0 changes nothing; a value lowers every thread-pool thread and nothing else', { skip: process.platform !== 'linux' }, async (t) => {
  // relative to what this process runs at (a test run may itself be niced)
  const before = new Map(threads().map((thread) => [thread.task, thread.nice]));
  const own = before.get(process.pid)!;
  t.equal(await lowerThreadPoolPriority(0), 0, 'nice 0: nothing set');
  t.ok(
    threads().every((thread) => thread.nice === (before.get(thread.task) ?? own)),
    'nothing changed',
  );

  const target = Math.min(19, own + 5);
  const lowered = await lowerThreadPoolPriority(target);
  const after = threads();
  const pool = after.filter((thread) => thread.name === 'libuv-worker');
  t.ok(pool.length >= 1, `the pool's threads exist (${pool.length})`);
  t.equal(lowered, pool.length, 'each of them counted');
  t.ok(
    pool.every((thread) => thread.nice === target),
    `each at nice ${target}`,
  );
  t.equal(after.find((thread) => thread.task === process.pid)!.nice, own, "the event loop's thread keeps its priority");
  t.ok(
    after.filter((thread) => thread.name !== 'libuv-worker').every((thread) => thread.nice === (before.get(thread.task) ?? own)),
    'no other thread changed',
  );
});
