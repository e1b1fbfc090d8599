// A small hand-built world for GET /api/v1/analytics/users, with figures computed by hand.
// Window used by the golden tests: 2026-02-25 (Wed) .. 2026-03-10 (Tue); clock 2026-03-15 12:00Z.
//
// Company A: units a1 a2 a3 (live) and aGone (deleted 2026-03-06 12:00Z, so it reports on the
// buckets that began before: docs/figures.md, "Deleted units"). Operators: opA1 on a1, opA2 on a2
// and a3, opGone on aGone only. Company B: units b1 b2 b3 (and one deleted in January); opB1 on
// b1. Company C: no live unit (its one unit was deleted in January).
//
// farmer  joined (UTC)          registered by  movements
// f1      2026-01-10            opA1           in a2 02-24 23:59:59 (before), in a1 02-25, out a1 03-03,
//                                              in b2 03-05, in a2 03-11 00:00:00 (after)
// f2      2026-02-26 08:00      opA2           in a2 02-27 09:00 and 15:00, in a3 02-27, out a2 03-09 23:59:59
// f3      2026-03-01 23:30      opB1           in a1 03-02 00:00:00, in b1 03-02 08:00
// f4      2026-03-10 23:59:59   opA1           -
// f5      2026-03-11 00:00:00   opA1           -
// f6      2026-02-24 23:59:59   opA2           in a3 02-20 (before), out a3 03-10 12:00
// f7      2026-02-01 inactive   opA1           -
// f8      2026-02-28            opB1           in b1 02-28, out b2 03-05
// f9      2026-02-27            opGone         in aGone 03-04
//
// Populations: A = {f1..f7, f9} (f3 by its check-in at a1, f9 by opGone of the deleted aGone);
// B = {f1 (check-in at b2), f3, f8}; a3 alone = {f2, f6}; a1 alone = {f1, f3, f4, f5, f7}.
import type { LightMyRequestResponse } from 'fastify';
import type pg from 'pg';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createCompany, type CompanyFixture } from '../../helpers/fixtures.js';

export const URL_BASE = '/api/v1/analytics/users';
export const NOW = new Date('2026-03-15T12:00:00Z');
export const GOLDEN_WINDOW = 'start_date=2026-02-25&end_date=2026-03-10';
/** aGone's deletion: it reports on the buckets that began before this instant */
export const A_GONE_DELETED_AT = '2026-03-06T12:00:00Z';

export interface UnitFiguresJson {
  cooling_unit_id: number;
  active_users: number;
  check_ins: number;
  check_outs: number;
}

export interface UsersRecordJson {
  period_start: string;
  period_end: string;
  registered_users: number | null;
  active_users: number;
  sign_ups: number;
  by_cooling_unit: UnitFiguresJson[];
}

export interface UsersJson {
  data: UsersRecordJson[];
  meta: {
    company_id: number;
    filters: Record<string, unknown>;
    pagination: { page: number; page_size: number; total_count: number; total_pages: number; has_next: boolean; has_previous: boolean };
  };
}

export interface ErrorJson {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export interface UsersWorld extends TestApp {
  a: CompanyFixture;
  b: CompanyFixture;
  /** a company whose only unit is deleted: an empty unit scope */
  c: { companyId: number; employeeId: number };
  farmers: Record<'f1' | 'f2' | 'f3' | 'f4' | 'f5' | 'f6' | 'f7' | 'f8' | 'f9', number>;
  get(headers: Record<string, string>, query?: string): Promise<LightMyRequestResponse>;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

async function one(pool: pg.Pool, sql: string, params: unknown[]): Promise<number> {
  return (await pool.query<{ id: number }>(sql, params)).rows[0]!.id;
}

export async function createUsersWorld(t: Teardown): Promise<UsersWorld> {
  const ctx = await createTestApp(t);
  ctx.clock.set(NOW);
  const pool = ctx.db.pool;
  const a = await createCompany(pool, 'Alpha Cold');
  const b = await createCompany(pool, 'Beta Cold', 'IN', 'INR');
  const [a1, a2, a3] = a.unitIds as [number, number, number];
  const [b1, b2] = b.unitIds as [number, number, number];

  await pool.query('UPDATE cooling_units SET deleted_at = $2 WHERE id = $1', [a.deletedUnitId, A_GONE_DELETED_AT]);
  await pool.query("UPDATE cooling_units SET deleted_at = '2026-01-15T00:00:00Z' WHERE id = $1", [b.deletedUnitId]);

  const companyC = await one(pool, "INSERT INTO companies (name, country, currency) VALUES ('Gamma Cold', 'PH', 'PHP') RETURNING id", []);
  const locationC = await one(pool, "INSERT INTO locations (company_id, name) VALUES ($1, 'Closed site') RETURNING id", [companyC]);
  await pool.query(
    `INSERT INTO cooling_units (location_id, company_id, name, capacity_crates, capacity_kg, deleted, deleted_at)
     VALUES ($1, $2, 'Gamma gone', 10, 250, true, '2026-01-15T00:00:00Z')`,
    [locationC, companyC],
  );
  const employeeC = await one(
    pool,
    "INSERT INTO users (role, company_id, first_name) VALUES ('REGISTERED_EMPLOYEE', $1, 'Gamma') RETURNING id",
    [companyC],
  );

  const operator = (companyId: number, name: string) =>
    one(pool, "INSERT INTO users (role, company_id, first_name) VALUES ('OPERATOR', $1, $2) RETURNING id", [companyId, name]);
  const opA1 = a.operatorId;
  const opA2 = await operator(a.companyId, 'opA2');
  const opGone = await operator(a.companyId, 'opGone');
  const opB1 = b.operatorId;
  const assign = (operatorId: number, unitId: number) =>
    pool.query('INSERT INTO operator_assignments (operator_id, cooling_unit_id) VALUES ($1, $2)', [operatorId, unitId]);
  await assign(opA1, a1);
  await assign(opA2, a2);
  await assign(opA2, a3);
  await assign(opGone, a.deletedUnitId);
  await assign(opB1, b1);

  const farmer = (code: string, companyId: number, registeredBy: number, joined: string, active = true) =>
    one(
      pool,
      `INSERT INTO users (role, company_id, first_name, user_code, registered_by, date_joined, is_active)
       VALUES ('FARMER', $1, $2, $2, $3, $4, $5) RETURNING id`,
      [companyId, code, registeredBy, joined, active],
    );
  const farmers = {
    f1: await farmer('W-F1', a.companyId, opA1, '2026-01-10T09:00:00Z'),
    f2: await farmer('W-F2', a.companyId, opA2, '2026-02-26T08:00:00Z'),
    f3: await farmer('W-F3', b.companyId, opB1, '2026-03-01T23:30:00Z'),
    f4: await farmer('W-F4', a.companyId, opA1, '2026-03-10T23:59:59Z'),
    f5: await farmer('W-F5', a.companyId, opA1, '2026-03-11T00:00:00Z'),
    f6: await farmer('W-F6', a.companyId, opA2, '2026-02-24T23:59:59Z'),
    f7: await farmer('W-F7', a.companyId, opA1, '2026-02-01T10:00:00Z', false),
    f8: await farmer('W-F8', b.companyId, opB1, '2026-02-28T10:00:00Z'),
    f9: await farmer('W-F9', a.companyId, opGone, '2026-02-27T10:00:00Z'),
  };
  const { f1, f2, f3, f6, f8, f9 } = farmers;

  const checkIn = (unitId: number, farmerId: number, at: string) =>
    pool.query('INSERT INTO check_ins (cooling_unit_id, farmer_id, checked_in_at) VALUES ($1, $2, $3)', [unitId, farmerId, at]);
  const checkOut = (unitId: number, farmerId: number, at: string) =>
    pool.query(
      "INSERT INTO check_outs (cooling_unit_id, farmer_id, checked_out_at, currency, cooling_fees) VALUES ($1, $2, $3, 'NGN', 100)",
      [unitId, farmerId, at],
    );
  await checkIn(a2, f1, '2026-02-24T23:59:59Z');
  await checkIn(a1, f1, '2026-02-25T10:00:00Z');
  await checkOut(a1, f1, '2026-03-03T09:00:00Z');
  await checkIn(b2, f1, '2026-03-05T11:00:00Z');
  await checkIn(a2, f1, '2026-03-11T00:00:00Z');
  await checkIn(a2, f2, '2026-02-27T09:00:00Z');
  await checkIn(a2, f2, '2026-02-27T15:00:00Z');
  await checkIn(a3, f2, '2026-02-27T10:00:00Z');
  await checkOut(a2, f2, '2026-03-09T23:59:59Z');
  await checkIn(a1, f3, '2026-03-02T00:00:00Z');
  await checkIn(b1, f3, '2026-03-02T08:00:00Z');
  await checkIn(a3, f6, '2026-02-20T10:00:00Z');
  await checkOut(a3, f6, '2026-03-10T12:00:00Z');
  await checkIn(b1, f8, '2026-02-28T10:00:00Z');
  await checkOut(b2, f8, '2026-03-05T10:00:00Z');
  await checkIn(a.deletedUnitId, f9, '2026-03-04T10:00:00Z');

  const get: UsersWorld['get'] = (headers, query = '') =>
    ctx.app.inject({ method: 'GET', url: query ? `${URL_BASE}?${query}` : URL_BASE, headers });

  return { ...ctx, a, b, c: { companyId: companyC, employeeId: employeeC }, farmers, get };
}

/**
 * Expected record, written compactly: [start, end, registered, active, sign_ups, {unitId: [active,
 * in, out]}] (registered null for a bucket that has not begun).
 */
export type Expected = [string, string, number | null, number, number, Record<number, [number, number, number]>];

/** `unitIds`: the units listed in by_cooling_unit, the same for every bucket or by period_start. */
export function expectedRecords(rows: Expected[], unitIds: number[] | ((periodStart: string) => number[])): UsersRecordJson[] {
  const unitsOf = typeof unitIds === 'function' ? unitIds : () => unitIds;
  return rows.map(([start, end, registered, active, signUps, units]) => ({
    period_start: start,
    period_end: end,
    registered_users: registered,
    active_users: active,
    sign_ups: signUps,
    by_cooling_unit: unitsOf(start).map((id) => {
      const [unitActive, checkIns, checkOuts] = units[id] ?? [0, 0, 0];
      return { cooling_unit_id: id, active_users: unitActive, check_ins: checkIns, check_outs: checkOuts };
    }),
  }));
}
