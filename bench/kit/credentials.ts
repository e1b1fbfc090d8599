// API tokens inserted by SQL (the project's generator, SHA-256 stored) and employee JWTs, handed out
// fresh to every run so the rate limits are never what a scenario measures.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { mintEmployeeJwt } from '../../src/auth/jwt.js';
import { generateToken, hashToken } from '../../src/tokens/format.js';
import { BENCH_JWT_SECRET, type CompanyLayout, type Layout } from './config.js';

export const ALL_SCOPES = ['users', 'utilization', 'revenue', 'impact', 'sensor_data'] as const;

export interface BenchToken {
  id: string;
  raw: string;
  companyId: number;
  /** empty: company-wide */
  unitIds: number[];
}

export interface Employee {
  userId: number;
  companyId: number;
  jwt: string;
}

/** Hands out credentials no earlier run used; exhausted, it throws rather than hand one out twice. */
export class CredentialPool<T> {
  private next = 0;
  constructor(
    readonly name: string,
    private readonly items: T[],
    private readonly make?: () => T,
  ) {}

  take(count: number): T[] {
    if (this.make) {
      const made = Array.from({ length: count }, this.make);
      this.items.push(...made);
      return made;
    }
    if (this.next + count > this.items.length) {
      throw new Error(`credential pool ${this.name} exhausted: ${count} wanted, ${this.items.length - this.next} left`);
    }
    const taken = this.items.slice(this.next, this.next + count);
    this.next += count;
    return taken;
  }

  /** how many were taken (a counting pool: how many a plan needs) */
  get used(): number {
    return this.make ? this.items.length : this.next;
  }
}

export interface Credentials {
  /** Bench Alpha, every scope, company-wide */
  alpha: CredentialPool<BenchToken>;
  /** every company, some restricted to three units, every scope */
  mixed: CredentialPool<BenchToken>;
  /** Registered Employees of Bench Gamma, for the management scenario */
  managers: CredentialPool<Employee>;
  /** Registered Employee of Bench Alpha who revokes (P7) */
  revoker: Employee;
}

export interface CredentialNeeds {
  alpha: number;
  mixed: number;
  managers: number;
}

/** Fake credentials that only count: scenarios are built once with these to size the real pools. */
export function countingCredentials(): Credentials {
  const fakeToken = (): BenchToken => ({ id: randomUUID(), raw: 'ctk_plan', companyId: 1, unitIds: [] });
  const fakeEmployee = (): Employee => ({ userId: 0, companyId: 3, jwt: 'plan' });
  return {
    alpha: new CredentialPool('alpha', [], fakeToken),
    mixed: new CredentialPool('mixed', [], fakeToken),
    managers: new CredentialPool('managers', [], fakeEmployee),
    revoker: fakeEmployee(),
  };
}

async function insertEmployees(pool: pg.Pool, employees: { userId: number; companyId: number }[]) {
  await pool.query(
    `INSERT INTO users (id, role, company_id, first_name) SELECT id, 'REGISTERED_EMPLOYEE', company_id, 'Bench employee'
     FROM unnest($1::int[], $2::int[]) AS e (id, company_id)`,
    [employees.map((e) => e.userId), employees.map((e) => e.companyId)],
  );
}

/** Tokens straight into api_tokens (the management API would spend minutes and its own limits). */
async function insertTokens(pool: pg.Pool, tokens: BenchToken[], ownerOf: (companyId: number) => number) {
  for (let start = 0; start < tokens.length; start += 5000) {
    const batch = tokens.slice(start, start + 5000);
    await pool.query(
      `INSERT INTO api_tokens (id, company_id, name, scopes, token_hash, created_by)
       SELECT id, company_id, 'bench ' || left(id::text, 8), $5::text[], token_hash, created_by
       FROM unnest($1::uuid[], $2::int[], $3::bytea[], $4::int[]) AS t (id, company_id, token_hash, created_by)`,
      [
        batch.map((t) => t.id),
        batch.map((t) => t.companyId),
        batch.map((t) => hashToken(t.raw)),
        batch.map((t) => ownerOf(t.companyId)),
        ALL_SCOPES,
      ],
    );
    const restricted = batch.filter((t) => t.unitIds.length > 0);
    await pool.query(`INSERT INTO api_token_cooling_units (api_token_id, cooling_unit_id) SELECT * FROM unnest($1::uuid[], $2::int[])`, [
      restricted.flatMap((t) => t.unitIds.map(() => t.id)),
      restricted.flatMap((t) => t.unitIds),
    ]);
  }
}

function makeTokens(count: number, companyOf: (i: number) => CompanyLayout, restrictEvery: number): BenchToken[] {
  return Array.from({ length: count }, (_, i) => {
    const company = companyOf(i);
    const restricted = restrictEvery > 0 && i % restrictEvery === restrictEvery - 1;
    const first = (i * 3) % Math.max(1, company.unitIds.length - 2);
    return {
      id: randomUUID(),
      raw: generateToken(),
      companyId: company.id,
      unitIds: restricted ? company.unitIds.slice(first, first + 3) : [],
    };
  });
}

/**
 * Employees (one owner per company, creator of its inserted tokens; the revoker; the managers)
 * and the tokens a run's plan needs, inserted into the data set's database.
 */
export async function issueCredentials(pool: pg.Pool, layout: Layout, needs: CredentialNeeds): Promise<Credentials> {
  const owners = layout.companies.map((company, i) => ({ userId: i + 1, companyId: company.id }));
  const revokerId = owners.length + 1;
  const managerIds = Array.from({ length: needs.managers }, (_, i) => revokerId + 1 + i);
  await insertEmployees(pool, [...owners, { userId: revokerId, companyId: 1 }, ...managerIds.map((userId) => ({ userId, companyId: 3 }))]);
  const jwtFor = (userId: number) => mintEmployeeJwt({ secret: BENCH_JWT_SECRET, userId, ttlSeconds: 4 * 3600 });
  const managers = await Promise.all(managerIds.map(async (userId) => ({ userId, companyId: 3, jwt: await jwtFor(userId) })));
  const revoker = { userId: revokerId, companyId: 1, jwt: await jwtFor(revokerId) };

  const alpha = makeTokens(needs.alpha, () => layout.heavy, 0);
  const mixed = makeTokens(needs.mixed, (i) => layout.companies[i % layout.companies.length]!, 5);
  await insertTokens(pool, [...alpha, ...mixed], (companyId) => companyId);
  return {
    alpha: new CredentialPool('alpha', alpha),
    mixed: new CredentialPool('mixed', mixed),
    managers: new CredentialPool('managers', managers),
    revoker,
  };
}
