// The demo data set (src/seed/demo.ts) as of one fixed instant, for the files that test on it:
// seeded once a run into a derived template (a seed costs seconds of CPU, most of it PostgreSQL's)
// and cloned by each file, with the app's clock at that instant.
import { seedDemo, type DemoSummary } from '../../src/seed/demo.js';
import { createTestApp, TEST_JWT_SECRET, type TestApp, type TestAppOptions } from './app.js';
import { createTestDatabase, derivedTemplate, postgresServer } from './db.js';

/** The instant every demo date is relative to, and the app's clock when a file starts. */
export const DEMO_NOW = new Date('2026-06-15T12:00:00Z');

interface Teardown {
  teardown(fn: () => unknown): void;
}

/** The app on a fresh clone of the demo data set; `demo` names its companies and mints their employees' JWTs. */
export async function createDemoApp(
  t: Teardown,
  env: Record<string, string> = {},
  options: Omit<TestAppOptions, 'database'> = {},
): Promise<{ ctx: TestApp; demo: DemoSummary }> {
  const seed = { jwtSecret: TEST_JWT_SECRET, now: DEMO_NOW };
  const template = await derivedTemplate('demo', async (db) => {
    await seedDemo(db.pool, seed);
  });
  const ctx = await createTestApp(t, env, { ...options, database: await createTestDatabase(t, postgresServer, template) });
  ctx.clock.set(DEMO_NOW);
  // the companies are there: this only reads their ids and mints the JWTs
  const demo = await seedDemo(ctx.db.pool, seed);
  return { ctx, demo };
}

/** The first demo company as a partner with a token of `scope` sees it: its units, and the deleted ones with when. */
export async function firstCompanyView(ctx: TestApp, demo: DemoSummary, scope: string, tokenName: string) {
  const company = demo.companies[0]!;
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/api/v1/api-tokens',
    headers: { authorization: `Bearer ${company.employee_jwt}` },
    payload: { name: tokenName, scopes: [scope] },
  });
  const headers = { authorization: `Bearer ${created.json<{ token: string }>().token}` };
  const units = [...company.cooling_unit_ids].sort((x, y) => x - y);
  // the demo deletes a unit of every company, with history before that: it reports on the periods
  // that began before its deletion (docs/figures.md, "Deleted units")
  const { rows: deleted } = await ctx.db.pool.query<{ id: number; deleted_at: Date }>(
    'SELECT id, deleted_at FROM cooling_units WHERE id = ANY($1)',
    [company.deleted_cooling_unit_ids],
  );
  const unitsReportingOn = (periodStart: string) =>
    units.length + deleted.filter((unit) => Date.parse(periodStart) < unit.deleted_at.getTime()).length;
  return { company, headers, units, deleted, unitsReportingOn };
}
