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
