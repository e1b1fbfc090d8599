// The bulk endpoint's one stream of a token at a time while Redis is away, on a real 2-worker
// cluster and a private redis-server, killed and then hung (SIGSTOP): pulls are answered (never a
// 5xx, never later than the command timeout allows) and each worker counts a token's streams on
// its own, as the rate limits fall back to per-process counting (docs/operations.md, "Outages").
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/redis/connection.js';
import { startCluster, startRedis } from './harness.js';
import { createBulkWorld, holdPull } from './bulk-pulls.js';

const world = await createBulkWorld(t);

t.test('Redis down or hung: pulls answered, a token limited per worker', async (t) => {
  const privateRedis = await startRedis(t);
  const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: privateRedis.url });
  const check = async (t: Test, what: string) => {
    const token = await world.issue();
    const held = await holdPull(cluster, token.headers);
    t.equal(held.status, 200, `${what}: a pull`);
    const seen = new Map<string, number>();
    for (let attempt = 0; attempt < 8 && seen.size < 2; attempt++) {
      const again = await holdPull(cluster, token.headers);
      const took = again.ms;
      t.ok(took < 3 * REDIS_COMMAND_TIMEOUT_MS + 2000, `${what}: answered in ${took} ms`);
      const where = again.pid === held.pid ? 'same' : 'other';
      seen.set(where, again.status);
      if (again.status === 200) await again.finish();
      else again.drop();
    }
    t.same(Object.fromEntries(seen), { same: 429, other: 200 }, `${what}: the same token is refused on its worker, served on the other`);
    await held.finish();
  };
  await privateRedis.kill();
  await check(t, 'Redis down');
  await privateRedis.start();
  await sleep(1500);
  privateRedis.pause();
  try {
    await check(t, 'Redis hung');
  } finally {
    privateRedis.resume();
  }
  t.ok(
    cluster.logs().some((line) => line.msg === 'Redis unavailable: bulk streams of a token are limited per process'),
    'logged',
  );
  t.notMatch(cluster.output(), /died/, 'no worker crashed');
});
