// DATABASE_READ_URL through PgBouncer too: a private PostgreSQL 15 primary and its streaming replica
// (test/helpers/pg-replica.ts), each behind its own PgBouncer in transaction mode (Debian's 1.18),
// the service as a 2-worker cluster with DB_POOLER=transaction, DATABASE_URL and DATABASE_READ_URL
// through the poolers and DATABASE_SESSION_URL straight to the primary: the deployment
// docs/operations.md ("PgBouncer" and "Read replica") describes when both are used. It checks that:
//   - every data endpoint answers through the replica's pooler (no statement the pooler cannot
//     carry: prepared statements, session settings), within its server connections;
//   - the data pages read the replica (replica lag hides rows written on the primary until replayed);
//   - the replica's pooler lost: pages come from the primary, /readyz is 200 "degraded".
import t from 'tap';
import { createPool } from '../../src/db/pool.js';
import { migrateWithProfile } from '../helpers/db.js';
import { createCompany } from '../helpers/fixtures.js';
import { startPgBouncer } from '../helpers/pgbouncer.js';
import { startPgReplicaPair } from '../helpers/pg-replica.js';
import { ALL_SCOPES } from '../helpers/tokens.js';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { send, startCluster, startRedis, statusCounts, until } from './harness.js';

const REPLICA_POOL = 3;
const pair = await startPgReplicaPair(t);
const database = await pair.createDatabase();
await migrateWithProfile(database.primaryUrl, 'postgres');
// as docs/operations.md says: statements outside a transaction run under the database's defaults
await pair.queryPrimary(`ALTER DATABASE ${database.name} SET jit = off`);
const primary = createPool(database.primaryUrl, 3, { onError: () => {} });
t.teardown(() => primary.end());
const acme = await createCompany(primary, 'Acme');
await pair.waitForReplay();

const primaryBouncer = await startPgBouncer(t, { serverPort: pair.primary.port, defaultPoolSize: 4 });
const replicaBouncer = await startPgBouncer(t, { serverPort: pair.replica.port, defaultPoolSize: REPLICA_POOL });
const redis = await startRedis(t);
const cluster = await startCluster(
  t,
  {
    DATABASE_URL: primaryBouncer.url(database.name),
    DATABASE_SESSION_URL: database.primaryUrl,
    DATABASE_READ_URL: replicaBouncer.url(database.name),
    DB_POOLER: 'transaction',
    DB_POOL_MAX: '5',
    REDIS_URL: redis.url,
  },
  { workers: 2 },
);
const base = cluster.baseUrl;
t.afterEach(() => pair.resumeReplay());

const jwt = { authorization: `Bearer ${await mintEmployeeJwt({ secret: TEST_JWT_SECRET, userId: acme.employeeId, ttlSeconds: 3600 })}` };
const created = await send(base, '/api/v1/api-tokens', {
  method: 'POST',
  headers: jwt,
  body: { name: 'pooled replica', scopes: ALL_SCOPES, cooling_unit_ids: [], expires_at: null },
});
if (created.status !== 201) throw new Error(`token creation: ${created.status} ${created.body}`);
const token = { authorization: `Bearer ${created.json<{ token: string }>().token}` };

const D = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
const unit = acme.unitIds[0]!;
const PATHS = [
  ...['users', 'utilization', 'revenue', 'impact'].map((name) => `/api/v1/analytics/${name}?start_date=${D}&end_date=${D}&page_size=10`),
  `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${D}&end_date=${D}`,
  `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${D}&end_date=${D}&aggregation=hourly`,
  `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${D}&end_date=${D}&aggregation=daily`,
];

/** Client backends of the service's database on the replica: the replica pooler's server connections. */
const replicaBackends = async () =>
  Number(
    (
      await pair.queryReplica<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()",
        [database.name],
      )
    )[0]!.n,
  );

t.test('every data endpoint answers through the replica pooler, within its server connections', async (t) => {
  const ready = await send(base, '/readyz');
  t.same([ready.status, ready.json().checks], [200, { database: 'ok', read_replica: 'ok', redis: 'ok' }], '/readyz: both poolers answer');
  const queriesBefore = await replicaQueries();
  const replies = await Promise.all(
    Array.from({ length: 56 }, (_, i) => send(base, PATHS[i % PATHS.length]!, { headers: token, timeoutMs: 10_000 })),
  );
  t.same(statusCounts(replies), { 200: 56 }, "all 56 answered 200 (within the token's rate limit)");
  t.ok((await replicaQueries()) > queriesBefore, "the replica's pooler carried queries");
  t.ok((await replicaBackends()) <= REPLICA_POOL, `the replica served them on at most ${REPLICA_POOL} connections`);
});

/** Queries the replica's pooler has carried for the service's database. */
async function replicaQueries() {
  const rows = await replicaBouncer.admin<{ database: string; total_query_count: string }>('SHOW STATS');
  return Number(rows.find((row) => row.database === database.name)?.total_query_count ?? 0);
}

t.test('the data pages read the replica: rows written on the primary appear once replayed', async (t) => {
  const path = (from: string) => `/api/v1/sensor-data?cooling_unit_id=${unit}&start_date=${from}&end_date=${D}&page_size=100`;
  await pair.pauseReplay();
  await primary.query(
    `INSERT INTO sensor_readings (cooling_unit_id, specification_type, recorded_at, value)
     SELECT $1, 'TEMPERATURE', $2::timestamptz + n * interval '15 minutes', 4 + n FROM generate_series(0, 3) AS n`,
    [unit, `${D}T09:00:00Z`],
  );
  const lagging = await send(base, path(D), { headers: token });
  t.equal(lagging.status, 200, lagging.body);
  t.equal(lagging.json<{ meta: { pagination: { total_count: number } } }>().meta.pagination.total_count, 0, 'not replayed: none yet');
  await pair.resumeReplay();
  await pair.waitForReplay();
  // another window: sensor-data caches a window's counts for a few seconds
  const from = new Date(Date.parse(D) - 86_400_000).toISOString().slice(0, 10);
  const replayed = await send(base, path(from), { headers: token });
  t.equal(replayed.json<{ meta: { pagination: { total_count: number } } }>().meta.pagination.total_count, 4, 'replayed: the 4 readings');
});

t.test("the replica's pooler lost: pages from the primary, /readyz 200 degraded", async (t) => {
  await replicaBouncer.stop();
  const replies = await Promise.all(
    Array.from({ length: 21 }, (_, i) => send(base, PATHS[i % PATHS.length]!, { headers: token, timeoutMs: 10_000 })),
  );
  t.same(statusCounts(replies), { 200: 21 }, 'all 21 answered from the primary');
  const ready = await until(
    '/readyz to report the replica',
    async () => {
      const reply = await send(base, '/readyz');
      return reply.json<{ checks?: { read_replica?: string } }>().checks?.read_replica === 'unreachable' && reply;
    },
    10_000,
  );
  t.same([ready.status, ready.json().status], [200, 'degraded'], '/readyz: 200, degraded');
  t.notOk(
    cluster.logs().some((line) => /prepared statement|unsupported startup parameter/i.test(JSON.stringify(line))),
    'no pooler incompatibility logged',
  );
});
