// The demo data set meets the operating contract (docs/contract.md, "Operating contract"):
// shape, realism, idempotence, reproducibility, working JWTs (and the user ids they name, which
// `npm run mint-jwt` asks for) and a clean CLI stdout.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import t from 'tap';
import { createJwtVerifier } from '../../src/auth/jwt.js';
import { seedDemo, type DemoSummary } from '../../src/seed/demo.js';
import { createTestDatabase } from '../helpers/db.js';
import { nodeArgs } from '../helpers/entry.js';

const jwtSecret = 'demo-seed-test-secret-0123456789abcdef';
const jwtIssuer = 'coldtrack-test';
const jwtAudience = 'coldtrack-api';
const now = new Date();
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const DAY = 86_400_000;

async function tableCounts(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT quote_ident(table_name) AS name FROM information_schema.tables
     WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const { rows } = await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${name}`);
    counts[name] = Number(rows[0]!.n);
  }
  return counts;
}

/** Figures an analytics endpoint would report; equal seeds and clocks must give equal figures. */
async function figures(pool: pg.Pool) {
  const { rows } = await pool.query(`
    SELECT c.name, co.currency, co.paid, count(*)::int AS check_outs,
      sum(co.cooling_fees)::text AS fees, sum(co.discount)::text AS discounts
    FROM check_outs co JOIN cooling_units u ON u.id = co.cooling_unit_id
    JOIN companies c ON c.id = u.company_id
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
  const { rows: totals } = await pool.query(`
    SELECT (SELECT sum(initial_weight_kg)::text FROM crates) AS kg_in,
      (SELECT sum(kg_sold)::text FROM market_surveys) AS kg_sold,
      (SELECT sum(loss_share)::text FROM baseline_surveys) AS baseline_loss,
      (SELECT round(sum(value)::numeric, 2)::text FROM sensor_readings) AS readings`);
  return { revenue: rows, totals };
}

t.test('demo data set', async (t) => {
  const { pool } = await createTestDatabase(t);
  const started = Date.now();
  const summary = await seedDemo(pool, { jwtSecret, jwtIssuer, jwtAudience, now });
  t.comment(`seeded in ${Date.now() - started} ms`);

  t.ok(summary.companies.length >= 2, 'at least two companies');
  const { rows: unanalyzed } = await pool.query<{ relname: string }>(
    `SELECT relname FROM pg_class WHERE relname IN ('check_ins', 'crates', 'check_outs', 'users') AND reltuples < 0`,
  );
  t.same(unanalyzed, [], 'planner statistics taken for what was loaded (autovacuum may be off)');
  for (const company of summary.companies) {
    t.test(company.name, async (t) => {
      t.same(Object.keys(company).sort(), [
        'cooling_unit_ids',
        'deleted_cooling_unit_ids',
        'employee_jwt',
        'employee_user_id',
        'id',
        'location_ids',
        'name',
        'non_employee_jwt',
        'non_employee_user_id',
      ]);
      t.ok(company.location_ids.length >= 1, 'locations');
      t.ok(company.cooling_unit_ids.length >= 3, 'at least three live units');
      t.ok(company.deleted_cooling_unit_ids.length >= 1, 'a soft-deleted unit');

      const { rows: units } = await pool.query('SELECT id, deleted, deleted_at FROM cooling_units WHERE company_id = $1 ORDER BY id', [
        company.id,
      ]);
      t.same(
        units.filter((u) => !u.deleted).map((u) => u.id),
        company.cooling_unit_ids,
      );
      t.same(
        units.filter((u) => u.deleted).map((u) => u.id),
        company.deleted_cooling_unit_ids,
      );
      t.ok(
        units.filter((u) => u.deleted).every((u) => u.deleted_at instanceof Date),
        'deleted_at set',
      );

      const {
        rows: [stats],
      } = await pool.query(
        `
        SELECT
          (SELECT count(*)::int FROM users WHERE company_id = $1 AND role = 'FARMER') AS farmers,
          (SELECT count(*)::int FROM check_ins ci JOIN cooling_units u ON u.id = ci.cooling_unit_id
            WHERE u.company_id = $1) AS check_ins,
          (SELECT count(DISTINCT currency)::int FROM check_outs co
            JOIN cooling_units u ON u.id = co.cooling_unit_id WHERE u.company_id = $1) AS currencies,
          (SELECT count(DISTINCT payment_method)::int FROM check_outs co
            JOIN cooling_units u ON u.id = co.cooling_unit_id WHERE u.company_id = $1) AS methods,
          (SELECT count(*) FILTER (WHERE paid)::int FROM check_outs co
            JOIN cooling_units u ON u.id = co.cooling_unit_id WHERE u.company_id = $1) AS paid,
          (SELECT count(*) FILTER (WHERE NOT paid)::int FROM check_outs co
            JOIN cooling_units u ON u.id = co.cooling_unit_id WHERE u.company_id = $1) AS pending,
          (SELECT count(*)::int FROM market_surveys ms JOIN check_outs co ON co.id = ms.check_out_id
            JOIN cooling_units u ON u.id = co.cooling_unit_id WHERE u.company_id = $1) AS market_surveys,
          (SELECT count(*)::int FROM baseline_surveys bs JOIN users f ON f.id = bs.farmer_id
            WHERE f.company_id = $1) AS baseline_surveys`,
        [company.id],
      );
      t.ok(stats.farmers > 0, 'farmers');
      t.ok(stats.check_ins > 0, 'check-ins');
      t.ok(stats.currencies >= 2, 'check-outs in two or more currencies');
      t.ok(stats.methods >= 2, 'two or more payment methods');
      t.ok(stats.paid > 0 && stats.pending > 0, 'paid and pending check-outs');
      t.ok(stats.market_surveys > 0, 'market surveys');
      t.ok(stats.baseline_surveys > 0, 'baseline surveys');

      const { rows: series } = await pool.query<{ id: number; type: string; n: number; first: Date; last: Date }>(
        `
        SELECT u.id, s.type, count(r.recorded_at)::int AS n, min(r.recorded_at) AS first, max(r.recorded_at) AS last
        FROM unnest($1::int[]) AS u (id)
        CROSS JOIN unnest(ARRAY['TEMPERATURE', 'HUMIDITY']::specification_type[]) AS s (type)
        LEFT JOIN sensor_readings r ON r.cooling_unit_id = u.id AND r.specification_type = s.type
        GROUP BY 1, 2`,
        [company.cooling_unit_ids],
      );
      t.equal(series.length, company.cooling_unit_ids.length * 2);
      for (const s of series) {
        const label = `unit ${s.id} ${s.type}`;
        t.ok(s.first.getTime() <= now.getTime() - 30 * DAY, `${label}: starts 30 days back`);
        t.ok(
          s.last.getTime() <= now.getTime() && s.last.getTime() > now.getTime() - 15 * 60_000,
          `${label}: ends at the last 15-minute mark`,
        );
        t.equal(s.last.toISOString().slice(0, 10), now.toISOString().slice(0, 10), `${label}: ends today`);
        t.equal(s.n, (s.last.getTime() - s.first.getTime()) / 900_000 + 1, `${label}: no gaps`);
      }

      const verifier = createJwtVerifier({ jwt: { kind: 'secret', secret: jwtSecret }, issuer: jwtIssuer, audience: jwtAudience });
      const later = new Date(now.getTime() + 3600_000);
      const employee = await verifier.verify(company.employee_jwt, later);
      const operator = await verifier.verify(company.non_employee_jwt, later);
      const { rows: users } = await pool.query('SELECT id, role, company_id, is_active FROM users WHERE id = ANY($1::int[]) ORDER BY id', [
        [Number(employee.sub), Number(operator.sub)],
      ]);
      const roleOf = (sub: string) => users.find((u) => String(u.id) === sub);
      t.match(roleOf(employee.sub), { role: 'REGISTERED_EMPLOYEE', company_id: company.id, is_active: true });
      t.match(roleOf(operator.sub), { role: 'OPERATOR', company_id: company.id });
      // the ids `npm run mint-jwt -- <user_id>` asks for, beside the JWTs that name them
      t.equal(company.employee_user_id, Number(employee.sub), 'employee_user_id: the user the employee JWT names');
      t.equal(company.non_employee_user_id, Number(operator.sub), 'non_employee_user_id: the user the operator JWT names');
    });
  }

  t.test('a second run changes nothing', async (t) => {
    const before = await tableCounts(pool);
    const again = await seedDemo(pool, { jwtSecret, jwtIssuer, jwtAudience, now: new Date() });
    t.same(await tableCounts(pool), before);
    const ids = (s: DemoSummary) => s.companies.map(({ employee_jwt: _e, non_employee_jwt: _n, ...rest }) => rest);
    t.same(ids(again), ids(summary), 'same companies, locations and units');
  });

  t.test('the same seed and clock give the same figures', async (t) => {
    const other = await createTestDatabase(t);
    await seedDemo(other.pool, { jwtSecret, now });
    t.same(await figures(other.pool), await figures(pool));
  });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The seed CLI as a partner engineer runs it (`npm run seed -- ...`), or straight from node. */
function runSeedCli(args: string[], env: Record<string, string>, via: 'npm' | 'node' = 'node'): Promise<Run> {
  const { DATABASE_URL: _d, JWT_SECRET: _s, JWT_PUBLIC_KEY: _k, ...inherited } = process.env;
  // what `npm test` passes down to its children would otherwise configure the inner npm
  for (const name of Object.keys(inherited)) if (/^npm_/i.test(name)) delete inherited[name];
  const [command, commandArgs] =
    via === 'npm' ? ['npm', ['run', 'seed', '--', ...args]] : [process.execPath, [...nodeArgs('src/cli/seed.ts'), ...args]];
  return new Promise((resolve) => {
    execFile(command, commandArgs, { cwd: repoRoot, env: { ...inherited, ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

t.test('npm run seed -- --demo --json prints exactly one JSON object', async (t) => {
  const { url } = await createTestDatabase(t);
  const run = await runSeedCli(['--demo', '--json'], { DATABASE_URL: url, JWT_SECRET: jwtSecret }, 'npm');
  t.equal(run.code, 0, run.code === 0 ? 'exits 0' : run.stderr);
  // npm's own "> coldtrack-api@0.1.0 seed" banner goes to stdout unless the project's .npmrc
  // silences it
  const parsed: unknown = JSON.parse(run.stdout);
  t.equal(run.stdout.trim().split('\n').length, 1, 'one line');
  t.ok(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), 'an object');
  t.ok((parsed as DemoSummary).companies.length >= 2);
  const verifier = createJwtVerifier({ jwt: { kind: 'secret', secret: jwtSecret }, issuer: null, audience: null });
  for (const company of (parsed as DemoSummary).companies) {
    const { sub } = await verifier.verify(company.employee_jwt, new Date());
    t.equal(company.employee_user_id, Number(sub), `${company.name}: the employee's user id, for npm run mint-jwt -- ${sub}`);
  }
});

t.test('the seed CLI refuses bad usage and configuration', async (t) => {
  const noDemo = await runSeedCli(['--json'], { DATABASE_URL: 'postgres://127.0.0.1/x', JWT_SECRET: jwtSecret });
  t.equal(noDemo.code, 2);
  t.equal(noDemo.stdout, '');
  const noUrl = await runSeedCli(['--demo', '--json'], { JWT_SECRET: jwtSecret });
  t.equal(noUrl.code, 1);
  t.match(noUrl.stderr, /^Invalid configuration: DATABASE_URL is required[^\n]*\n$/);
  const shortSecret = await runSeedCli(['--demo'], { DATABASE_URL: 'postgres://127.0.0.1/x', JWT_SECRET: 'short' });
  t.equal(shortSecret.code, 1);
  t.match(shortSecret.stderr, /^Invalid configuration: JWT_SECRET [^\n]*\n$/);
});
