// A Redis Cluster failover under load, on a real cluster of 3 masters with a replica each: a master
// is killed (SIGKILL) while both workers of the service serve a steady stream of data requests;
// its replica takes its slots over once the others have marked it FAIL. Meanwhile commands on its
// slots fail and the others answer, which made each worker log "Redis unavailable" / "Redis is
// back" several times and count each flap as a fallback. Now, per worker: one line when Redis is
// lost, one when it is back, and rate_limit_redis_fallbacks_total counts the one outage. Limits and
// revocation hold throughout: no 5xx, and a revoked token is never accepted.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { REDIS_BACK_AFTER_MS } from '../../src/redis/outage.js';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import { createWorld, metricSum, type Reply, send, startCluster, statusCounts, tokenManagement, until, DATA_PATH } from './harness.js';

const WORKERS = 2;
const NODE_TIMEOUT_MS = 2000;
const LOST = 'Redis unavailable: rate limits fall back to per-process counting';
const BACK = 'Redis is back: rate limits are shared again';

const world = await createWorld(t);
const redis = await startRedisCluster(t, { masters: 3, replicasPerMaster: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_CLUSTER_NODES: redis.seeds }, { workers: WORKERS });
const jwt = { authorization: `Bearer ${await world.jwt(world.acme.employeeId)}` };
const { revoke, warm } = tokenManagement(cluster, jwt, { workers: WORKERS, revokeRetryMs: 10_000 });

/**
 * A refusal: 401, or the 429 of the client IP's limit on failed credentials (public_read, 120 a
 * minute), which a request only meets once its token was refused.
 */
const refused = (reply: Reply) =>
  reply.status === 401 ||
  (reply.status === 429 && reply.json<{ error: { details?: { scope?: string } } }>().error.details?.scope === 'public_read');

const perWorker = (message: string) => {
  const counts = new Map<number, number>();
  for (const line of cluster.logs()) if (line.msg === message) counts.set(line.pid, (counts.get(line.pid) ?? 0) + 1);
  return counts;
};

t.test('a master fails over under load: one lost and one back line per worker, one fallback each', async (t) => {
  const ready = await send(cluster.baseUrl, '/readyz');
  t.equal(ready.status, 200, ready.body);
  t.same(perWorker(LOST).size, 0, 'no outage yet');

  // the master to kill: the one holding the revocation markers; tokens whose rate-limit counters
  // it holds too, so commands keep failing on it while the others answer
  const victim = await redis.nodeOf('coldtrack:{revocations}:epoch');
  const onVictim: Array<{ id: string; headers: { authorization: string } }> = [];
  const elsewhere: typeof onVictim = [];
  while (onVictim.length < 3 || elsewhere.length < 3) {
    const token = await world.issue();
    const holder = await redis.nodeOf(`coldtrack:rl:analytics_api_token:${token.id}`);
    (holder.port === victim.port ? onVictim : elsewhere).push(token);
  }
  const revoked = await world.issue();
  await warm(t, revoked.headers);
  t.equal((await revoke(revoked.id)).status, 200, 'a token revoked before the failover');

  const replies: Array<{ reply: Reply; revoked: boolean }> = [];
  let loading = true;
  const lane = async (lane: number) => {
    for (let i = lane; loading; i += 4) {
      const useRevoked = i % 5 === 0;
      const tokens = i % 2 === 0 ? onVictim : elsewhere;
      const headers = useRevoked ? revoked.headers : tokens[i % tokens.length]!.headers;
      const reply = await send(cluster.baseUrl, DATA_PATH, { headers, timeoutMs: 8000 }).catch(
        (error: Error) => ({ status: 0, body: error.message, headers: {}, ms: 0, json: () => ({}) }) as Reply,
      );
      replies.push({ reply, revoked: useRevoked });
      await sleep(20);
    }
  };
  const lanes = Promise.all([0, 1, 2, 3].map(lane));
  await sleep(1000);

  try {
    const killed = Date.now();
    await victim.kill();
    await until(
      'the replica to take over',
      async () => {
        const masters = await redis.masters().catch(() => []);
        return masters.length === 3 && !masters.some((node) => node.port === victim.port);
      },
      NODE_TIMEOUT_MS * 10,
      100,
    );
    t.comment(`failed over ${Date.now() - killed} ms after the kill`);
    // past the quiet time that says "back", under the same load
    await sleep(REDIS_BACK_AFTER_MS + 2000);
  } finally {
    loading = false;
    await lanes;
  }

  await until('every worker back', () => [...perWorker(BACK).values()].length === WORKERS, 15_000, 100).catch(() => {});
  const lost = perWorker(LOST);
  const back = perWorker(BACK);
  t.comment(`lost: ${JSON.stringify(Object.fromEntries(lost))}, back: ${JSON.stringify(Object.fromEntries(back))}`);
  t.equal(lost.size, WORKERS, 'both workers met the outage');
  t.same([...lost.values()], Array(WORKERS).fill(1), 'each logged the loss once');
  t.same([...back.values()], Array(WORKERS).fill(1), 'each logged once that Redis is back');
  const metrics = (await send(cluster.baseUrl, '/metrics')).body;
  t.equal(metricSum(metrics, 'rate_limit_redis_fallbacks_total'), WORKERS, 'rate_limit_redis_fallbacks_total: one outage per worker');

  const live = replies.filter((each) => !each.revoked).map((each) => each.reply);
  const counts = statusCounts(live);
  t.comment(`${live.length} requests of live tokens: ${JSON.stringify(counts)}`);
  t.ok(
    live.every((reply) => reply.status === 200 || reply.status === 429),
    "every live token's request answered 200 or 429, never a 5xx",
  );
  t.ok((counts[200] ?? 0) > 0, 'and served');
  const ofRevoked = replies.filter((each) => each.revoked).map((each) => each.reply);
  t.ok(
    ofRevoked.length > 0 && ofRevoked.every(refused),
    `the revoked token: all ${ofRevoked.length} refused (${JSON.stringify(statusCounts(ofRevoked))})`,
  );
  const after = await send(cluster.baseUrl, '/readyz');
  t.equal(after.status, 200, `ready after the failover: ${after.body}`);
});
