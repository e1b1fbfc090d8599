// A leak report against the real service as a 2-worker cluster: the token works (and is cached)
// on both workers, the signed report is answered, and from that answer on neither worker accepts
// the token once, however many fresh connections ask. The same guarantee as an employee's revoke
// (test/data-surface/token-auth.test.ts), because it is the same path (src/tokens/revoke-everywhere.ts).
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { verifyChain } from '../../../src/audit/verify.js';
import { createWorld, dataRequests, send, startCluster, statusCounts, tokenManagement } from '../../operations/harness.js';
import { keysSetting, leakEvents, LEAKS, makeSigner, reportBody, signedHeaders } from './setup.js';

const WORKERS = 2;
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const github = makeSigner();
const world = await createWorld(t);
const cluster = await startCluster(
  t,
  {
    DATABASE_URL: world.databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `coldtrack-test-leaks-${randomBytes(4).toString('hex')}:`,
    LEAK_REPORT_PUBLIC_KEYS: keysSetting(github),
  },
  { workers: WORKERS },
);
const { warm } = tokenManagement(
  cluster,
  { authorization: `Bearer ${await world.jwt(world.acme.employeeId)}` },
  {
    workers: WORKERS,
    revokeRetryMs: 0,
  },
);

t.test('a signed report revokes a live token at once on every worker', async (t) => {
  for (let round = 0; round < 3; round++) {
    const leaked = await world.issue();
    await warm(t, leaked.headers);
    const body = reportBody([{ token: leaked.token }, { token: leaked.token.slice(0, -2) + 'zz' }]);
    const response = await send(cluster.baseUrl, LEAKS, { method: 'POST', headers: signedHeaders(github, body), body: JSON.parse(body) });
    t.equal(response.status, 200, `round ${round}: answered`);
    t.same(
      response.json<Array<{ label: string }>>().map((entry) => entry.label),
      ['true_positive', 'false_positive'],
    );
    const after = await dataRequests([cluster], 8 * WORKERS, leaked.headers);
    t.same(statusCounts(after.replies), { 401: 8 * WORKERS }, `round ${round}: 0 requests accepted after the answer`);
    t.equal(after.workers, WORKERS, `round ${round}: asked on both workers`);
    t.same(
      (await leakEvents(world.ctx.db.pool, leaked.id)).map((event) => event.action),
      ['token.leak_reported', 'token.revoked_leaked'],
    );
  }
  t.match(await verifyChain(world.ctx.db.pool, world.acme.companyId), { ok: true }, 'the chain verifies');
  t.notMatch(cluster.output(), /ctk_[0-9A-Za-z]{20}/, 'no worker logged a token');
});
