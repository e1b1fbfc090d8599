// The service's own queries run as named (prepared) statements on each connection, so PostgreSQL
// stops parsing and planning them on every request (bench/: the warm-token page 0.78x -> 0.96-1.00x
// the reference); DB_PREPARED_STATEMENTS=off runs everything unnamed, for poolers that cannot
// keep prepared statements. Checked on the connection itself (pg_prepared_statements is per
// session), through a pool of one.
import t from 'tap';
import { createPool } from '../../src/db/pool.js';
import { loadQueries } from '../../src/db/sql.js';
import { statementName } from '../../src/db/statements.js';
import { createTestApp } from '../helpers/app.js';
import { createCompany } from '../helpers/fixtures.js';
import { issueToken } from '../helpers/tokens.js';

const PREPARED = 'SELECT name, statement FROM pg_prepared_statements ORDER BY name';
const sql = loadQueries('api-tokens', ['countTokens']);

t.test('a pool prepares the registered statements, once per connection, and nothing else', async (t) => {
  const ctx = await createTestApp(t);
  const pool = createPool(ctx.db.url, 1);
  t.teardown(() => pool.end());
  const company = await createCompany(ctx.db.pool, 'Prepared Co');
  for (let run = 0; run < 3; run++) {
    const { rows } = await pool.query<{ total_count: number }>(sql.countTokens, [company.companyId, 'active', new Date()]);
    t.equal(rows[0]!.total_count, 0, `run ${run + 1}: the named statement answers like the unnamed one`);
  }
  await pool.query('SELECT $1::int AS ad_hoc', [1]);
  const { rows } = await pool.query<{ name: string; statement: string }>(PREPARED);
  t.equal(rows.length, 1, 'one prepared statement: the registered query, not the ad-hoc one nor this one');
  t.match(rows[0]!.name, /^ct_[\w-]{16}$/);
  t.equal(rows[0]!.statement, sql.countTokens);

  // a client checked out for a transaction is the same kind of client
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query({ text: sql.countTokens, values: [company.companyId, 'revoked', new Date()] });
    await client.query('COMMIT');
    const again = await client.query<{ name: string }>(PREPARED);
    t.equal(again.rows.length, 1, 'the same statement reused, not prepared twice');
  } finally {
    client.release();
  }
});

t.test('a statement whose preparation failed (an aborted transaction) is prepared again on its next use', async (t) => {
  const ctx = await createTestApp(t);
  const pool = createPool(ctx.db.url, 1);
  t.teardown(() => pool.end());
  const company = await createCompany(ctx.db.pool, 'Aborted Co');
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await t.rejects(client.query('SELECT 1 / 0'), /division by zero/);
    await t.rejects(client.query(sql.countTokens, [company.companyId, 'active', new Date()]), /current transaction is aborted/);
    await client.query('ROLLBACK');
    const { rows } = await client.query<{ total_count: number }>(sql.countTokens, [company.companyId, 'active', new Date()]);
    t.equal(rows[0]!.total_count, 0, 'answers after the rollback, on the same connection');
    t.equal((await client.query(PREPARED)).rows.length, 1, 'prepared once it could be');
  } finally {
    client.release();
  }
});

t.test('queries loaded with prepared: false stay unnamed (their plans depend on the page size)', async (t) => {
  // the routes' own loads register them (or not); loading again changes nothing
  await import('../../src/routes/analytics/utilization.js');
  await import('../../src/routes/analytics/revenue.js');
  const utilization = loadQueries('analytics-utilization', ['utilization'], { prepared: false });
  const revenue = loadQueries('analytics-revenue', ['revenueCheckOuts']);
  t.equal(statementName(utilization.utilization), undefined, 'utilization: planned on every call');
  t.match(statementName(revenue.revenueCheckOuts), /^ct_/, 'revenue: prepared');
  // impact's survey queries: a generic plan read every survey of the window (bench/generic-plans.ts)
  await import('../../src/routes/analytics/impact.js');
  const impact = loadQueries('analytics-impact', ['impactCrates', 'impactSurveys', 'impactFarmers'], { prepared: false });
  t.match(statementName(impact.impactCrates), /^ct_/, 'impact crates: prepared (its generic plan reads by unit)');
  t.equal(statementName(impact.impactSurveys), undefined, 'impact surveys: planned on every call');
  t.equal(statementName(impact.impactFarmers), undefined, 'impact farmers: planned on every call');
});

t.test('with preparation off, nothing is prepared and the answers are the same', async (t) => {
  const ctx = await createTestApp(t);
  const pool = createPool(ctx.db.url, 1, { preparedStatements: false });
  t.teardown(() => pool.end());
  const company = await createCompany(ctx.db.pool, 'Unprepared Co');
  const { rows } = await pool.query<{ total_count: number }>(sql.countTokens, [company.companyId, 'active', new Date()]);
  t.equal(rows[0]!.total_count, 0);
  t.same((await pool.query(PREPARED)).rows, [], 'no prepared statement on the connection');
});

t.test('an analytics page is served from a prepared statement, with the same figures as without', async (t) => {
  const bodies: string[] = [];
  for (const prepared of [true, false]) {
    const base = await createTestApp(t);
    const readPool = createPool(base.db.url, 1, { preparedStatements: prepared });
    t.teardown(() => readPool.end());
    const ctx = await createTestApp(t, {}, { database: base.db, readPool });
    ctx.clock.set(new Date('2025-03-10T12:00:00Z'));
    const company = await createCompany(ctx.db.pool, 'Revenue Co');
    await ctx.db.pool.query(
      `INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees, discount, paid, payment_method)
       SELECT id, $1, '2025-03-09T10:00:00Z', 'NGN', 12.5, 2, true, 'CASH' FROM cooling_units WHERE company_id = $2`,
      [company.farmerIds[0], company.companyId],
    );
    const token = await issueToken(ctx, company.employeeId, { scopes: ['revenue'] });
    // more than five runs: PostgreSQL may switch to its generic plan after the fifth
    for (let run = 0; run < 7; run++) {
      const response = await ctx.app.inject({
        method: 'GET',
        url: '/api/v1/analytics/revenue?start_date=2025-03-09&end_date=2025-03-09&page_size=10',
        headers: token.headers,
      });
      t.equal(response.statusCode, 200);
      if (run === 0 || run === 6) bodies.push(response.body);
    }
    const { rows } = await readPool.query<{ statement: string }>(PREPARED);
    if (prepared)
      t.ok(
        rows.some((row) => row.statement.includes('FROM check_outs co')),
        'the revenue query is prepared on the read pool',
      );
    else t.same(rows, [], 'nothing prepared');
  }
  t.equal(bodies.length, 4);
  t.match(bodies[0], /"total_revenue":10\.5/, 'the seeded check-out counts');
  t.ok(
    bodies.every((body) => body === bodies[0]),
    'the first and seventh answers, prepared or not, are the same',
  );
});
