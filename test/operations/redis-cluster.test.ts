// The service on a real 3-master Redis Cluster (REDIS_CLUSTER_NODES), as a 2-worker cluster:
// limits are exact and revokes reach both workers at once, as on one Redis server. Then a master
// dies (SIGKILL; no replica takes over): first only its slots fail, then, once the others have
// marked it FAIL (cluster-node-timeout, 2 s here), the whole cluster answers CLUSTERDOWN. Through
// all of it requests are answered (per-process fallback, never a 5xx), a revoke answers 200 or
// 503, and a token revoked before, or by any revoke that answered 200, is never accepted again;
// the master returns on its ports, empty, and everything is shared and exact again.
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/redis/connection.js';
import { type RedisClusterNode, startRedisCluster } from '../helpers/redis-cluster.js';
import {
  createWorld,
  dataRequests as sharedDataRequests,
  DATA_PATH,
  type Reply,
  send,
  startCluster,
  statusCounts,
  tokenManagement,
  until,
} from './harness.js';

const NODE_TIMEOUT_MS = 2000;
const world = await createWorld(t);
const redis = await startRedisCluster(t, { masters: 3, nodeTimeoutMs: NODE_TIMEOUT_MS });
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_CLUSTER_NODES: redis.seeds }, { workers: 2 });
const base = cluster.baseUrl;
const jwt = { authorization: `Bearer ${await world.jwt(world.acme.employeeId)}` };
/** "Nothing waits long" with Redis away, as test/operations/redis-outage.test.ts has it for a hung server */
const LATENCY_BOUND_MS = 2 * REDIS_COMMAND_TIMEOUT_MS + 1000;
/** where the revocation markers and the store's epoch live (one hash tag: one slot, one master) */
const REVOCATION_KEY = 'coldtrack:{revocations}:epoch';

const dataRequests = (n: number, headers: Record<string, string>) => sharedDataRequests([cluster], n, headers);

const { revoke, revokeUntilDone, retrieve, warm } = tokenManagement(cluster, jwt, { workers: 2, revokeRetryMs: 20_000 });

/**
 * A refusal: 401, or the 429 of the client IP's limit on failed credentials (public_read, 120 a
 * minute), which a request only meets once its token was refused; a 429 of the token's own limit
 * would prove nothing.
 */
const refused = (reply: Reply) =>
  reply.status === 401 ||
  (reply.status === 429 && reply.json<{ error: { details?: { scope?: string } } }>().error.details?.scope === 'public_read');

function noneAccepted(t: Test, replies: Reply[], what: string) {
  t.ok(replies.every(refused), `${what}: all ${replies.length} refused (${JSON.stringify(statusCounts(replies))})`);
}

/** Every answer a 200 or a 429: served on the fallback, never a 5xx. */
function answered(t: Test, replies: Reply[], what: string) {
  const counts = statusCounts(replies);
  t.ok(
    replies.every((reply) => reply.status === 200 || reply.status === 429),
    `${what}: ${JSON.stringify(counts)} (200 or 429, no 5xx)`,
  );
  t.ok((counts[200] ?? 0) > 0, `${what}: data endpoints keep serving`);
}

/** 4 sequential requests of a fresh token count down 99..96: one shared counter again. */
async function sharedAgain(): Promise<boolean> {
  const { headers } = await world.issue();
  const remaining: string[] = [];
  for (let i = 0; i < 4; i++)
    remaining.push(String((await send(base, DATA_PATH, { headers, timeoutMs: 5000 })).headers['x-ratelimit-remaining']));
  return remaining.join() === '99,98,97,96';
}

/** The master holding a key with this text in its name (SCAN of every running node). */
async function holderOf(text: string): Promise<RedisClusterNode | undefined> {
  for (const node of redis.nodes.filter((each) => each.running())) {
    if ((await redis.cli(node, '--scan', '--pattern', `*${text}*`)).trim()) return node;
  }
  return undefined;
}

t.test('on a healthy 3-master cluster: exact limits, revokes at once, ready', async (t) => {
  const ready = await send(base, '/readyz');
  t.equal(ready.status, 200, `/readyz: ${ready.body}`);
  t.same(ready.json().checks, { database: 'ok', redis: 'ok' });

  const counted = await world.issue();
  const burst = await dataRequests(110, counted.headers);
  t.same(statusCounts(burst.replies), { 200: 100, 429: 10 }, '110 at once: exactly 100 admitted');
  t.equal(burst.workers, 2, 'over both workers');
  t.ok(await sharedAgain(), 'X-RateLimit-Remaining counts 99, 98, 97, 96 over both workers');

  // the counters of several tokens land on more than one master; the markers on one
  const holders = new Set<number>();
  for (let i = 0; i < 9; i++) {
    const token = await world.issue();
    t.equal((await send(base, DATA_PATH, { headers: token.headers })).status, 200);
    holders.add((await holderOf(token.id))?.port ?? 0);
  }
  t.notOk(holders.has(0), 'every counter is in the cluster');
  t.comment(`9 tokens' counters on masters ${[...holders].join(', ')}; revocation markers on ${(await redis.nodeOf(REVOCATION_KEY)).port}`);
  t.ok(holders.size >= 2, 'the keys are spread over the masters');

  const token = await world.issue();
  await warm(t, token.headers);
  const revoked = await revoke(token.id);
  t.equal(revoked.status, 200, 'revoked');
  const after = await dataRequests(20, token.headers);
  noneAccepted(t, after.replies, 'right after the revoke');
  t.equal(after.workers, 2, 'checked on both workers');
});

/**
 * Kills `node` and checks the invariants twice: right away (its slots fail) and once the cluster
 * is down (every slot fails); restarts it and checks that everything is shared and exact again.
 */
async function outage(t: Test, node: RedisClusterNode, counted: { id: string; headers: { authorization: string } }) {
  const revokedBefore = await world.issue();
  await warm(t, revokedBefore.headers);
  t.equal((await revoke(revokedBefore.id)).status, 200, 'a token revoked before the outage');
  const live = await world.issue();
  await warm(t, live.headers);
  const victims = await Promise.all([world.issue(), world.issue()]);
  for (const victim of victims) await warm(t, victim.headers);
  const revokedDuring: string[] = [];

  await node.kill();
  for (const [phase, victim] of [
    ['right after the kill', victims[0]!],
    ['once the cluster is down', victims[1]!],
  ] as const) {
    if (phase === 'once the cluster is down') {
      await redis.waitUntilDown(NODE_TIMEOUT_MS * 5);
      t.comment(`cluster states: ${JSON.stringify(await redis.states())}`);
    }
    const served = await dataRequests(24, counted.headers);
    answered(t, served.replies, `${phase}: the token whose counter is affected`);
    t.ok(
      served.slowest < LATENCY_BOUND_MS,
      `${phase}: no request waited long (slowest of 24 ${Math.round(served.slowest)} ms, bound ${LATENCY_BOUND_MS} ms)`,
    );
    const other = await dataRequests(12, live.headers);
    answered(t, other.replies, `${phase}: another live token`);
    noneAccepted(t, (await dataRequests(8, revokedBefore.headers)).replies, `${phase}: the token revoked before`);

    const reply = await revoke(victim.id);
    t.ok(reply.status === 200 || reply.status === 503, `${phase}: a revoke answers 200 or 503 (${reply.status})`);
    if (reply.status === 200) {
      revokedDuring.push(victim.id);
      const after = await dataRequests(8, victim.headers);
      noneAccepted(t, after.replies, `${phase}: after the revoke answered 200`);
      t.equal(after.workers, 2, 'checked on both workers');
    } else {
      t.match(reply.json(), { error: { code: 'unavailable' } });
      t.ok(Number(reply.headers['retry-after']) > 0, 'with Retry-After');
      t.equal((await retrieve(victim.id)).revoked, false, `${phase}: the 503 changed nothing`);
    }
    for (const id of revokedDuring) {
      const token = victims.find((each) => each.id === id)!;
      noneAccepted(t, (await dataRequests(6, token.headers)).replies, `${phase}: a token revoked during the outage`);
    }
    const fresh = await world.issue();
    answered(t, (await dataRequests(6, fresh.headers)).replies, `${phase}: a token issued during the outage`);
    const ready = await send(base, '/readyz');
    t.comment(`${phase}: /readyz ${ready.status} ${ready.body}`);
    if (phase === 'once the cluster is down') {
      // PING would still answer on a cluster that refuses every key (CLUSTERDOWN): readiness runs
      // a command on the revocation keys' slot instead
      t.equal(ready.status, 503, '/readyz: 503 while the cluster refuses every command, as with a single Redis away');
    }
  }

  // back on its ports, from its nodes.conf, empty: the markers it held are gone
  await node.start();
  await redis.waitUntilOk(20_000);
  for (const victim of victims) {
    if (revokedDuring.includes(victim.id)) continue;
    t.equal((await revokeUntilDone(victim.id)).status, 200, 'a revoke refused during the outage goes through once the master is back');
  }
  for (const token of [revokedBefore, ...victims]) {
    const after = await dataRequests(8, token.headers);
    noneAccepted(t, after.replies, 'after the master came back empty');
    t.equal(after.workers, 2, 'checked on both workers');
  }
  t.ok(await until('limits shared again', () => sharedAgain(), 20_000, 200), 'limits are shared again');
  await until('/readyz ready again', async () => (await send(base, '/readyz')).status === 200 || undefined, 10_000, 200);
  // sharedAgain's token may count on another master than the one restarted, whose connections
  // each worker re-establishes on its own schedule (until then that worker counts alone, limit /
  // workers): exact again within a bound, a fresh token each try
  let exact = await dataRequests(110, (await world.issue()).headers);
  for (let tries = 1, deadline = Date.now() + 20_000; statusCounts(exact.replies)[200] !== 100 && Date.now() < deadline; tries++) {
    t.comment(`try ${tries}: ${JSON.stringify(statusCounts(exact.replies))}; a worker is still reconnecting to ${node.address}`);
    await sleep(500);
    exact = await dataRequests(110, (await world.issue()).headers);
  }
  t.same(statusCounts(exact.replies), { 200: 100, 429: 10 }, 'a fresh token gets exactly 100 again (within 20 s of readiness)');
  t.equal(exact.workers, 2, 'over both workers');
  t.notMatch(cluster.output(), /died/, 'no worker crashed');
}

t.test('the master holding the revocation markers dies, then comes back empty', async (t) => {
  const node = await redis.nodeOf(REVOCATION_KEY);
  const counted = await world.issue();
  t.equal((await send(base, DATA_PATH, { headers: counted.headers })).status, 200);
  t.comment(`killing ${node.address} (revocation markers; the counted token's counter is on ${(await holderOf(counted.id))?.address})`);
  await outage(t, node, counted);
});

t.test("a master holding a token's counter (not the markers) dies, then comes back empty", async (t) => {
  const markers = await redis.nodeOf(REVOCATION_KEY);
  // a token whose counter is on another master than the markers
  let counted: Awaited<ReturnType<typeof world.issue>> | undefined;
  let node: RedisClusterNode | undefined;
  for (let i = 0; i < 20 && !node; i++) {
    const token = await world.issue();
    t.equal((await send(base, DATA_PATH, { headers: token.headers })).status, 200);
    const holder = await holderOf(token.id);
    if (holder && holder.port !== markers.port) [counted, node] = [token, holder];
  }
  if (!node || !counted) throw new Error("no token counter landed off the markers' master in 20 tries");
  t.comment(`killing ${node.address} (the counted token's counter; markers stay on ${markers.address})`);
  await outage(t, node, counted);
});
