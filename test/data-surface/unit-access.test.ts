// Access follows the unit directory at once: a unit moved to another company, or soft-deleted, is
// unreadable by the old company's tokens on every process from the moment the change commits
// (a trigger announces it, each process drops the company's cached units as it hears it), and a
// process that is not listening caches nothing. Two apps on one database play two processes.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

const PATH = '/api/v1/analytics/utilization?page_size=100';

t.test('unit access follows the directory on every process', async (t) => {
  const a = await createTestApp(t);
  const b = await createTestApp(t, {}, { database: a.db });
  const pool = a.db.pool;
  const acme = await createCompany(pool, 'Acme');
  const other = await createCompany(pool, 'Other');
  const [moved, deleted, kept] = acme.unitIds as [number, number, number];
  const acmeToken = await issueToken(a, acme.employeeId);
  const otherToken = await issueToken(a, other.employeeId);
  const processes: Array<[string, TestApp]> = [
    ['process A', a],
    ['process B', b],
  ];
  await Promise.all([a, b].map((ctx) => until(() => ctx.app.accessControl.listening())));

  const status = (ctx: TestApp, unit: number, headers = acmeToken.headers) =>
    ctx.app.inject({ method: 'GET', url: `${PATH}&cooling_unit_id=${unit}`, headers }).then((reply) => reply.statusCode);
  const unitsSeen = async (ctx: TestApp, headers = acmeToken.headers) =>
    new Set(
      (await ctx.app.inject({ method: 'GET', url: PATH, headers }))
        .json<{ data: Array<{ cooling_unit_id: number }> }>()
        .data.map((r) => r.cooling_unit_id),
    );

  // every process has Acme's units cached
  for (const [name, ctx] of processes) {
    for (const unit of [moved, deleted, kept]) t.equal(await status(ctx, unit), 200, `${name}: unit ${unit} readable`);
  }

  await t.test('a unit moved to another company', async (t) => {
    const started = performance.now();
    await pool.query('UPDATE cooling_units SET company_id = $1, location_id = $2 WHERE id = $3', [
      other.companyId,
      other.locationId,
      moved,
    ]);
    for (const [name, ctx] of processes) {
      const waited = await until(async () => (await status(ctx, moved)) === 404);
      t.ok(waited < 1000, `${name}: refused ${Math.round(waited)} ms after the commit`);
      t.notOk((await unitsSeen(ctx)).has(moved), `${name}: gone from company-wide pages`);
      t.equal(await status(ctx, moved, otherToken.headers), 200, `${name}: readable by its new company`);
    }
    t.comment(`moved unit refused everywhere ${Math.round(performance.now() - started)} ms after the commit`);
  });

  await t.test('a unit soft-deleted', async (t) => {
    await pool.query('UPDATE cooling_units SET deleted = true, deleted_at = now() WHERE id = $1', [deleted]);
    for (const [name, ctx] of processes) {
      const waited = await until(async () => (await status(ctx, deleted)) === 404);
      t.ok(waited < 1000, `${name}: refused ${Math.round(waited)} ms after the commit`);
      t.equal(await status(ctx, kept), 200, `${name}: the other units still readable`);
    }
  });

  await t.test('a process whose listening connection is lost caches nothing until it listens again', async (t) => {
    await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN coldtrack_unit_directory'`,
    );
    await until(() => !a.app.accessControl.listening() && !b.app.accessControl.listening());
    // a change now is not announced to anyone listening: it must still be seen at once
    await pool.query('UPDATE cooling_units SET deleted = true, deleted_at = now() WHERE id = $1', [kept]);
    for (const [name, ctx] of processes) t.equal(await status(ctx, kept), 404, `${name}: refused at once while not listening`);
    await Promise.all([a, b].map((ctx) => until(() => ctx.app.accessControl.listening(), 5000)));
    await pool.query('UPDATE cooling_units SET deleted = false, deleted_at = NULL WHERE id = $1', [kept]);
    for (const [name, ctx] of processes) {
      const waited = await until(async () => (await status(ctx, kept)) === 200);
      t.ok(waited < 1000, `${name}: listening again, a restored unit readable ${Math.round(waited)} ms after the commit`);
    }
  });
});

/** Polls until check() is true; the milliseconds it took. Fails after timeoutMs. */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 2000): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`);
    await sleep(5);
  }
  return performance.now() - started;
}
