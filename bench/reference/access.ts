// Who may ask for what, as the project decides it per request: API tokens (SHA-256 looked up once,
// then cached in the worker like the project's warm tokens), their scope and unit list, the
// company's live units (cached 10 s), and employees by JWT (HS256) for the token endpoints.
import { createHash, createSecretKey } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { jwtVerify } from 'jose';
import type pg from 'pg';
import type { ProjectSql } from './project-sql.js';
import { LIMITS, type Limit } from './rate-limit.js';
import { Refusal } from './refusal.js';

export type Query = Record<string, string | undefined>;

export interface TokenRow {
  id: string;
  company_id: number;
  scopes: string[];
  expires_at: Date | null;
  revoked: boolean;
  cooling_unit_ids: number[];
}

const UNITS_TTL_MS = 10_000;

export type Access = ReturnType<typeof createAccess>;

export function createAccess(pool: pg.Pool, sql: ProjectSql, limit: Limit, jwtSecret: string) {
  const jwtKey = createSecretKey(Buffer.from(jwtSecret, 'utf8'));

  // warm tokens cost no query, as in the project
  const tokens = new Map<string, TokenRow | null>();
  async function apiToken(request: FastifyRequest, scope: string): Promise<TokenRow> {
    const raw = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!raw) throw new Refusal(401, 'unauthorized');
    const hash = createHash('sha256').update(raw).digest();
    const key = hash.toString('base64');
    let token = tokens.get(key);
    if (token === undefined) {
      token = (await pool.query<TokenRow>(sql.tokenForAuth, [hash])).rows[0] ?? null;
      tokens.set(key, token);
    }
    if (!token || token.revoked || (token.expires_at && token.expires_at.getTime() <= Date.now())) throw new Refusal(401, 'unauthorized');
    await limit(`token:${token.id}`, LIMITS.token);
    if (!token.scopes.includes(scope)) throw new Refusal(403, 'insufficient_scope');
    return token;
  }

  /** The units a request may read: the company's live units, narrowed by the token and the query. */
  const unitsByCompany = new Map<number, { at: number; units: { id: number; location_id: number }[] }>();
  async function unitScope(token: TokenRow, query: Query): Promise<number[]> {
    let entry = unitsByCompany.get(token.company_id);
    if (!entry || Date.now() - entry.at > UNITS_TTL_MS) {
      entry = { at: Date.now(), units: (await pool.query<{ id: number; location_id: number }>(sql.liveUnits, [token.company_id])).rows };
      unitsByCompany.set(token.company_id, entry);
    }
    let units = entry.units;
    if (token.cooling_unit_ids.length > 0) units = units.filter((unit) => token.cooling_unit_ids.includes(unit.id));
    if (query.cooling_unit_id) units = units.filter((unit) => unit.id === Number(query.cooling_unit_id));
    if (query.location_id) units = units.filter((unit) => unit.location_id === Number(query.location_id));
    if ((query.cooling_unit_id || query.location_id) && units.length === 0) throw new Refusal(404, 'not_found');
    return units.map((unit) => unit.id);
  }

  async function employee(request: FastifyRequest, write: boolean): Promise<{ id: number; company_id: number }> {
    const raw = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!raw) throw new Refusal(401, 'unauthorized');
    let subject: string | undefined;
    try {
      subject = (await jwtVerify(raw, jwtKey, { algorithms: ['HS256'] })).payload.sub;
    } catch {
      throw new Refusal(401, 'unauthorized');
    }
    await limit(`${write ? 'write' : 'read'}:${subject}`, write ? LIMITS.write : LIMITS.read);
    const user = (await pool.query<{ id: number; company_id: number; role: string }>(sql.userForAuth, [Number(subject)])).rows[0];
    if (!user || user.role !== 'REGISTERED_EMPLOYEE') throw new Refusal(403, 'insufficient_scope');
    return user;
  }

  return { apiToken, unitScope, employee };
}
