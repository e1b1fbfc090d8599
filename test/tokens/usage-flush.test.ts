// The usage write-behind's failures (src/tokens/usage.ts): a flush whose answer never arrives
// after PostgreSQL committed it is sent again under the same id and adds nothing twice; a flush
// that never reached the database keeps its counts for the next one; requests counted meanwhile
// go into the next batch. The database is real; a TCP proxy (test/helpers/tcp-proxy.ts) loses
// the answer the way a dropped connection does.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import t from 'tap';
import { createTokenUsage } from '../../src/tokens/usage.js';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { proxyInFrontOf } from '../helpers/tcp-proxy.js';
import { issueToken } from '../helpers/tokens.js';

const ctx = await createTestApp(t);
const company = await createCompany(ctx.db.pool, 'Usage Cold');
const token = await issueToken(ctx, company.employeeId);

const { proxy, url: proxied } = await proxyInFrontOf(t, ctx.db.url);
const pool = new pg.Pool({ connectionString: proxied, max: 1 });
pool.on('error', () => {}); // a cut connection: the next query reconnects
t.teardown(() => pool.end());

const clock = { now: () => new Date('2026-05-01T12:00:00Z') };
const usage = createTokenUsage(pool, clock);
const at = clock.now().getTime();
const count = (n: number, status = 200) => {
  for (let i = 0; i < n; i++) usage.count(token.id, '/api/v1/analytics/users', status, '192.0.2.7', 'etl', at);
};
const stored = async () => {
  const { rows } = await ctx.db.pool.query<{ class: string; requests: string }>(
    'SELECT class, requests FROM api_token_usage WHERE api_token_id = $1 ORDER BY class',
    [token.id],
  );
  return Object.fromEntries(rows.map((row) => [row.class, Number(row.requests)]));
};
const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 200 && !(await check()); i++) await sleep(25);
};

t.test('an answer lost after the commit: the retry adds nothing twice, later counts still arrive', async (t) => {
  count(5);
  proxy.replyDelayMs = 3000; // PostgreSQL commits; its answer waits in the proxy
  const lost = usage.flush();
  await until(async () => (await stored())['2xx'] === 5);
  t.strictSame(await stored(), { '2xx': 5 }, 'committed');
  await proxy.refuse(); // the connection drops before the answer is passed on
  await t.rejects(lost, 'the flush does not know whether it committed');
  count(2, 429);
  t.equal(usage.pendingTokens(), 2, 'the unsettled batch and the new counts, kept apart');

  proxy.replyDelayMs = 0;
  await proxy.open();
  await usage.flush();
  t.strictSame(await stored(), { '2xx': 5, '429': 2 }, 'the lost batch once, the new counts once');
  t.equal(usage.pendingTokens(), 0);
});

t.test('a flush that never reached the database keeps its counts for the next one', async (t) => {
  count(3, 503);
  await proxy.refuse();
  await t.rejects(usage.flush());
  await t.rejects(usage.flush(), 'still down: still kept');
  await proxy.open();
  await usage.flush();
  t.strictSame(await stored(), { '2xx': 5, '429': 2, '5xx': 3 });
});

t.test('the last client: a late flush of an older request does not overwrite a newer one', async (t) => {
  usage.count(token.id, '/api/v1/analytics/users', 200, '198.51.100.1', 'older', at - 60_000);
  await usage.flush();
  const { rows } = await ctx.db.pool.query('SELECT host(ip) AS ip, user_agent FROM api_token_last_client WHERE api_token_id = $1', [
    token.id,
  ]);
  t.strictSame(rows, [{ ip: '192.0.2.7', user_agent: 'etl' }]);
});
