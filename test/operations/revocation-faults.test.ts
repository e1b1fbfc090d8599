// The revocation invariant under Redis faults, on a real 2-worker cluster with a private
// redis-server: once a revoke call has answered 2xx, no worker accepts the token again, whatever
// Redis does before, during or after; when the service cannot guarantee that, the revoke answers
// 503 `unavailable` with Retry-After and changes nothing.
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import {
  createWorld,
  dataRequests as sharedDataRequests,
  type Reply,
  send,
  startCluster,
  startRedis,
  statusCounts,
  tokenManagement,
} from './harness.js';

const world = await createWorld(t);
const redis = await startRedis(t);
const cluster = await startCluster(t, { DATABASE_URL: world.databaseUrl, REDIS_URL: redis.url }, { workers: 2 });
const base = cluster.baseUrl;
const jwt = { authorization: `Bearer ${await world.jwt(world.acme.employeeId)}` };

const dataRequests = (n: number, headers: Record<string, string>) => sharedDataRequests([cluster], n, headers);

const { revoke, revokeUntilDone, retrieve, warm } = tokenManagement(cluster, jwt, { workers: 2, revokeRetryMs: 15_000 });

function noneAccepted(t: Test, replies: Reply[], what: string) {
  t.same(statusCounts(replies), { 401: replies.length }, `${what}: all ${replies.length} refused`);
}

t.test('revoke while Redis is down: 503, nothing changed; revoked once Redis is back', async (t) => {
  const token = await world.issue();
  await warm(t, token.headers);
  await redis.kill();
  const refused = await revoke(token.id);
  t.equal(refused.status, 503, `revoke: ${refused.body}`);
  t.match(refused.json(), { error: { code: 'unavailable' } });
  t.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After');
  t.equal((await retrieve(token.id)).revoked, false, 'nothing changed: the token is not revoked');
  const during = await dataRequests(8, token.headers);
  t.same(statusCounts(during.replies), { 200: 8 }, 'and it still works, as the 503 said');

  await redis.start();
  t.equal((await revokeUntilDone(token.id)).status, 200, 'revoked once Redis is back');
  t.equal((await retrieve(token.id)).revoked, true);
  const after = await dataRequests(20, token.headers);
  noneAccepted(t, after.replies, 'after the revoke');
  t.equal(after.workers, 2, 'checked on both workers');
});

t.test('Redis restarted empty after a revoke: no worker accepts the token from its cache', async (t) => {
  const token = await world.issue();
  await warm(t, token.headers);
  t.equal((await revokeUntilDone(token.id)).status, 200, 'revoked');
  noneAccepted(t, (await dataRequests(8, token.headers)).replies, 'right after the revoke');
  // the marker is lost with Redis's memory; the workers' caches still hold the live row
  await redis.kill();
  await redis.start();
  const { replies, workers } = await dataRequests(40, token.headers);
  noneAccepted(t, replies, 'after Redis came back empty');
  t.equal(workers, 2, 'checked on both workers');
  // a token that was never revoked still works: the caches were refilled from PostgreSQL
  const live = await world.issue();
  t.same(statusCounts((await dataRequests(8, live.headers)).replies), { 200: 8 }, 'a live token still works');
});

t.test('Redis flushed (FLUSHALL) after a revoke: the same', async (t) => {
  const token = await world.issue();
  await warm(t, token.headers);
  t.equal((await revokeUntilDone(token.id)).status, 200, 'revoked');
  const { Redis } = await import('ioredis');
  const admin = new Redis(redis.url);
  await admin.flushall();
  admin.disconnect();
  const { replies, workers } = await dataRequests(40, token.headers);
  noneAccepted(t, replies, 'after FLUSHALL');
  t.equal(workers, 2, 'checked on both workers');
});

t.test('Redis hung (SIGSTOP) during the revoke: 503 and nothing changed, or revoked for good', async (t) => {
  const token = await world.issue();
  await warm(t, token.headers);
  redis.pause();
  let outcome: Reply;
  try {
    outcome = await revoke(token.id);
  } finally {
    redis.resume();
  }
  t.equal(outcome.status, 503, `revoke while Redis hangs: ${outcome.body}`);
  t.equal((await retrieve(token.id)).revoked, false, 'nothing changed');
  t.equal((await revokeUntilDone(token.id)).status, 200, 'revoked once Redis answers again');
  noneAccepted(t, (await dataRequests(20, token.headers)).replies, 'after the revoke');
});

t.test('Redis flapping while tokens are revoked: 0 accepted after any revoke that answered 200', async (t) => {
  const tokens = await Promise.all(Array.from({ length: 6 }, () => world.issue()));
  for (const token of tokens) await warm(t, token.headers);
  const revoked: typeof tokens = [];
  for (const [i, token] of tokens.entries()) {
    if (i === 2) await redis.kill();
    if (i === 3) await redis.start();
    if (i === 4) redis.pause();
    // with Redis up again (steps 3 and 5), retry a 503 as a client honouring Retry-After would:
    // a worker may not have reconnected yet on a busy machine
    const reply = i === 3 || i === 5 ? await revokeUntilDone(token.id) : await revoke(token.id);
    if (i === 4) redis.resume();
    if (reply.status === 200) revoked.push(token);
    else t.equal(reply.status, 503, `revoke ${i}: 200 or 503, never anything else (${reply.status})`);
    // after each step, every token revoked so far is refused everywhere
    for (const gone of revoked)
      noneAccepted(t, (await dataRequests(6, gone.headers)).replies, `token ${tokens.indexOf(gone)} after step ${i}`);
  }
  t.ok(revoked.length >= 3, `${revoked.length} of 6 revokes answered 200`);
});

// Rotation brings the old token's expiry forward; caches hold rows with the old expiry, so the new
// one reaches every worker like a revoke does (a marker written before COMMIT). Real time here: a
// real cluster on the system clock.
const rotate = (id: string, graceSeconds: number) =>
  send(base, `/api/v1/api-tokens/${id}/rotate`, {
    method: 'POST',
    headers: jwt,
    body: { grace_period_seconds: graceSeconds },
    timeoutMs: 8000,
  });

t.test('rotation with grace 0 while both workers have the old token cached: none accepted after the 201', async (t) => {
  const token = await world.issue();
  await warm(t, token.headers);
  const rotated = await rotate(token.id, 0);
  t.equal(rotated.status, 201, `rotate: ${rotated.body}`);
  const after = await dataRequests(20, token.headers);
  noneAccepted(t, after.replies, 'the old token after the rotation');
  t.equal(after.workers, 2, 'checked on both workers');
  const replacement = await dataRequests(12, { authorization: `Bearer ${rotated.json<{ token: string }>().token}` });
  t.same(statusCounts(replacement.replies), { 200: 12 }, 'the new token works');
  t.equal(replacement.workers, 2, 'on both workers');
});

t.test('rotation with grace 2 s: the old token works on both workers until then, and nowhere after', async (t) => {
  const token = await world.issue();
  await warm(t, token.headers);
  const rotated = await rotate(token.id, 2);
  t.equal(rotated.status, 201, `rotate: ${rotated.body}`);
  const end = Date.parse((await send(base, `/api/v1/api-tokens/${token.id}`, { headers: jwt })).json<{ expires_at: string }>().expires_at);
  t.ok(end > Date.now(), 'the grace period is still running');

  const during = await dataRequests(8, token.headers);
  const answeredBy = Date.now();
  if (answeredBy >= end) t.fail(`the machine is too slow for this check: the requests took until ${answeredBy - end} ms past the end`);
  else {
    t.same(statusCounts(during.replies), { 200: 8 }, 'during the grace period: accepted');
    t.equal(during.workers, 2, 'on both workers');
  }

  await sleep(Math.max(0, end - Date.now()) + 20);
  const after = await dataRequests(20, token.headers);
  noneAccepted(t, after.replies, 'after the grace period');
  t.equal(after.workers, 2, 'checked on both workers');
  t.same(
    statusCounts((await dataRequests(8, { authorization: `Bearer ${rotated.json<{ token: string }>().token}` })).replies),
    { 200: 8 },
    'the new token works',
  );
});

t.test('rotation while Redis is down: 503, nothing changed; the old token keeps its expiry', async (t) => {
  const token = await world.issue();
  await warm(t, token.headers);
  await redis.kill();
  try {
    const refused = await rotate(token.id, 0);
    t.equal(refused.status, 503, `rotate: ${refused.body}`);
    t.match(refused.json(), { error: { code: 'unavailable' } });
    const after = await send(base, `/api/v1/api-tokens/${token.id}`, { headers: jwt });
    t.match(after.json(), { expires_at: null, replaced_by: null }, 'not rotated');
  } finally {
    await redis.start();
  }
  const still = await dataRequests(8, token.headers);
  t.same(statusCounts(still.replies), { 200: 8 }, 'the old token still works, as the 503 said');
});
