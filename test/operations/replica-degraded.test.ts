// The read replica lost and back, on a real streaming replica (test/helpers/pg-replica.ts) under a
// 2-worker cluster: degraded, not down.
//   - replica stopped: data pages (inline and on rollup threads) answer 200 from the primary (a row
//     the replica had not replayed shows: the primary answered), /readyz is 200 "degraded" naming
//     the replica on both workers (a load balancer keeps the instance), each worker logs the loss
//     once and counts it once in db_read_replica_fallbacks_total;
//   - replica started again: each worker logs once that it is back, /readyz is "ready", and data
//     pages read the replica again (a row it has not replayed is missing again).
import t from 'tap';
import { replicatedDatabaseWithCompany, startPgReplicaPair } from '../helpers/pg-replica.js';
import { bearerOfNewToken, dataRequests, metricSum, send, startCluster, startRedis, statusCounts, until } from './harness.js';

const WORKERS = 2;
const started = Date.now();
const pair = await startPgReplicaPair(t);
const { database, primary, acme } = await replicatedDatabaseWithCompany(t, pair);
await pair.waitForReplay();
const redis = await startRedis(t);
const env = { DATABASE_URL: database.primaryUrl, DATABASE_READ_URL: database.replicaUrl, REDIS_URL: redis.url };
const cluster = await startCluster(t, env, { workers: WORKERS });
t.comment(`primary ${pair.primary.port}, replica ${pair.replica.port}, cluster up in ${Date.now() - started} ms`);
t.afterEach(() => pair.resumeReplay().catch(() => {}));

const token = await bearerOfNewToken(cluster.baseUrl, acme.employeeId, 'replica lost');

const unit = acme.unitIds[0]!;
const dayOf = (offsetDays: number) => new Date(Date.now() - offsetDays * 86_400_000).toISOString().slice(0, 10);
const D = dayOf(5);
const REVENUE = `/api/v1/analytics/revenue?start_date=${D}&end_date=${D}&cooling_unit_id=${unit}&page_size=10`;
// 3 units x 150 days: past the inline limit (300 unit-days), a rollup thread's page
const HEAVY = `/api/v1/analytics/revenue?start_date=${dayOf(155)}&end_date=${D}&page_size=1000`;

async function checkOut(hour: number) {
  await primary.query(
    "INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, paid) VALUES ($1, $2, $3, 'NGN', 100, true)",
    [unit, acme.farmerIds[0], `${D}T${String(hour).padStart(2, '0')}:00:00Z`],
  );
}

/** The check-outs the revenue page shows, from n requests over both workers (all must agree). */
async function checkOutsSeen(n = 8) {
  const { replies, workers } = await dataRequests([cluster], n, token, REVENUE);
  const counts = replies.map((reply) =>
    reply.status === 200 ? (reply.json<{ data: Array<{ check_outs: number }> }>().data[0]?.check_outs ?? 0) : `status ${reply.status}`,
  );
  return { counts: [...new Set(counts)], statuses: statusCounts(replies), workers };
}

const lines = (message: string) => cluster.logs().filter((line) => line.msg === message);
const perWorker = (message: string) => {
  const counts = new Map<number, number>();
  for (const line of lines(message)) counts.set(line.pid, (counts.get(line.pid) ?? 0) + 1);
  return [...counts.values()];
};
const LOST = 'read replica unreachable: data reads go to the primary until it answers again';
const BACK = 'read replica answers again: data reads go back to it';

t.test('with the replica: ready, and pages read it (a row it has not replayed is not shown)', async (t) => {
  const ready = await send(cluster.baseUrl, '/readyz');
  t.same([ready.status, ready.json()], [200, { status: 'ready', checks: { database: 'ok', read_replica: 'ok', redis: 'ok' } }]);
  await pair.pauseReplay();
  await checkOut(8);
  const seen = await checkOutsSeen();
  t.same(seen.counts, [0], 'the replica has not replayed it: the replica answered');
  t.equal(seen.workers, WORKERS, 'on both workers');
});

t.test('replica stopped: pages from the primary, readyz 200 degraded, one line and one count per worker', async (t) => {
  await pair.stopReplica();
  // first a rollup thread's page: the thread meets the lost replica and the page runs again on the primary
  const heavy = await dataRequests([cluster], 4, token, HEAVY);
  t.same(statusCounts(heavy.replies), { 200: 4 }, `heavy pages (rollup threads) answered, on ${heavy.workers} workers`);
  const seen = await checkOutsSeen();
  t.same(seen.statuses, { 200: 8 }, 'every page answered');
  t.same(seen.counts, [1], 'with the row the replica never replayed: the primary answered');
  t.equal(seen.workers, WORKERS, 'on both workers');

  const readies = await Promise.all(Array.from({ length: 6 }, () => send(cluster.baseUrl, '/readyz')));
  for (const ready of readies) {
    t.same(
      [ready.status, ready.json()],
      [200, { status: 'degraded', checks: { database: 'ok', read_replica: 'unreachable', redis: 'ok' } }],
      'readyz: 200, degraded, naming the replica',
    );
  }
  // more of the same outage: still one line per worker
  await checkOutsSeen(12);
  t.same(perWorker(LOST), [1, 1], 'each worker logged the loss once');
  const metrics = (await send(cluster.baseUrl, '/metrics')).body;
  t.equal(metricSum(metrics, 'db_read_replica_fallbacks_total'), WORKERS, 'one fallback counted per worker');
  t.equal(metricSum(metrics, 'db_read_replica_lost'), WORKERS, 'both workers read the primary');
});

t.test('replica started again: one line per worker, ready, and pages read the replica again', async (t) => {
  const restarted = Date.now();
  await pair.startReplica();
  await until('both workers back on the replica', () => perWorker(BACK).length === WORKERS, 15_000, 100);
  t.comment(`back ${Date.now() - restarted} ms after the replica was started`);
  t.same(perWorker(BACK), [1, 1], 'each worker logged it once');
  const ready = await send(cluster.baseUrl, '/readyz');
  t.same([ready.status, ready.json()], [200, { status: 'ready', checks: { database: 'ok', read_replica: 'ok', redis: 'ok' } }]);
  await pair.waitForReplay();
  t.same((await checkOutsSeen()).counts, [1], 'the replica caught up');
  await pair.pauseReplay();
  await checkOut(9);
  const seen = await checkOutsSeen();
  t.same(seen.counts, [1], 'a row written now is not shown: the replica answers again');
  t.equal(seen.workers, WORKERS, 'on both workers');
  const metrics = (await send(cluster.baseUrl, '/metrics')).body;
  t.equal(metricSum(metrics, 'db_read_replica_lost'), 0, 'no worker reads the primary for want of it');
  t.equal(metricSum(metrics, 'db_read_replica_fallbacks_total'), WORKERS, 'the outage counted once per worker, no more');
});
