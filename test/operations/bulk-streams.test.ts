// The bulk endpoint's one stream of a token at a time, on a real 2-worker cluster (src/rate-limit/
// stream-leases.ts). On the shared Redis (this file's own key prefix): a pull held open on one
// worker makes the same token's pull on the other worker a 429 while another token pulls, a pull
// that ended frees the slot at once, and a worker killed mid-pull holds its slot no longer than
// the lease's TTL. Redis down or hung: bulk-streams-redis-faults.test.ts.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import t from 'tap';
import { LEASE_TTL_MS } from '../../src/rate-limit/stream-leases.js';
import { startCluster, until } from './harness.js';
import { createBulkWorld, holdPull, pullElsewhere } from './bulk-pulls.js';

const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const world = await createBulkWorld(t);

t.test('on the shared Redis: one stream of a token across both workers', async (t) => {
  const prefix = `coldtrack-test-bulk-${randomBytes(4).toString('hex')}:`;
  const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: SHARED_REDIS_URL, REDIS_KEY_PREFIX: prefix });
  const redis = new Redis(SHARED_REDIS_URL);
  t.teardown(() => redis.quit());
  const token = await world.issue();
  const leaseKey = `${prefix}lease:${token.id}`;

  const held = await holdPull(cluster, token.headers);
  t.equal(held.status, 200, `a pull held open on worker ${held.pid}`);
  t.equal(await redis.zcard(leaseKey), 1, 'it holds a lease in Redis');
  const second = await pullElsewhere(cluster, token.headers, held.pid);
  t.equal(second.status, 429, `the same token's pull on the other worker (${second.pid}): 429`);
  const other = await world.issue();
  const otherReleased = () =>
    until('the dropped pull released', async () => (await redis.zcard(`${prefix}lease:${other.id}`)) === 0, LEASE_TTL_MS + 5000);
  const beside = await pullElsewhere(cluster, other.headers, held.pid, otherReleased);
  t.equal(beside.status, 200, 'another token pulls beside it on that worker');

  const bytes = await held.finish();
  t.ok(bytes > 1_000_000, `the held pull ends whole (${bytes} bytes)`);
  await until('the lease released', async () => (await redis.zcard(leaseKey)) === 0, 3000);
  const next = await pullElsewhere(cluster, token.headers, held.pid, () =>
    until('the dropped pull released', async () => (await redis.zcard(leaseKey)) === 0, LEASE_TTL_MS + 5000),
  );
  t.equal(next.status, 200, 'the slot is free once the pull ended: the other worker takes the next one');

  await t.test('a worker killed mid-pull holds its slot no longer than the lease', async (t) => {
    await until('the lease released', async () => (await redis.zcard(leaseKey)) === 0, 3000);
    const victim = await holdPull(cluster, token.headers);
    t.equal(victim.status, 200);
    process.kill(victim.pid, 'SIGKILL');
    const killedAt = Date.now();
    victim.drop();
    const statuses: number[] = [];
    // when the first pull served was sent (a 200's body takes a while to come on a busy machine)
    const freedAfter = await until(
      'the slot freed',
      async () => {
        const sentAfter = Date.now() - killedAt;
        const pull = await holdPull(cluster, token.headers);
        pull.drop();
        statuses.push(pull.status);
        return pull.status === 200 && sentAfter;
      },
      LEASE_TTL_MS + 10_000,
      500,
    );
    t.equal(statuses[0], 429, 'refused at first: the dead worker still held the lease');
    t.ok(freedAfter <= LEASE_TTL_MS + 1500, `freed ${freedAfter} ms after the kill (lease ${LEASE_TTL_MS} ms)`);
    t.ok(freedAfter >= LEASE_TTL_MS - LEASE_TTL_MS / 3 - 1000, 'not before the lease could have lapsed');
    await until('the lease released', async () => (await redis.zcard(leaseKey)) === 0, 3000);
  });
});
