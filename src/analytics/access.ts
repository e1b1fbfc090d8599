// Authorization of the data surface, in one place: the endpoint's scope, then the units a request
// may read. Queries receive only the UnitScope this returns, never ids straight from the request,
// so no route can widen what a token sees.
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { loadQueries } from '../db/sql.js';
import { insufficientScope, notFound } from '../http/errors.js';
import type { AuthenticatedToken } from '../tokens/authenticator.js';
import type { Scope } from '../tokens/scopes.js';

const sql = loadQueries('analytics', ['liveUnitsOfCompany']);

export interface UnitScope {
  companyId: number;
  /** ascending; may be empty (a company without live units) */
  unitIds: number[];
}

export interface UnitFilters {
  cooling_unit_id?: number | undefined;
  location_id?: number | undefined;
}

interface CompanyUnit {
  id: number;
  location_id: number;
}

// units change rarely (an operator adds or deletes a room); a short TTL keeps this per-request
// lookup off the database without letting a deleted unit linger
const UNIT_DIRECTORY_TTL_MS = 10_000;

export function createAccessControl(pool: pg.Pool) {
  const unitsByCompany = new LRUCache<number, CompanyUnit[]>({
    max: 10_000,
    ttl: UNIT_DIRECTORY_TTL_MS,
    fetchMethod: async (companyId) => (await pool.query<CompanyUnit>(sql.liveUnitsOfCompany, [companyId])).rows,
  });

  return {
    async authorize(token: AuthenticatedToken, scope: Scope, filters: UnitFilters): Promise<UnitScope> {
      if (!token.scopes.has(scope)) throw insufficientScope(scope);
      let units = (await unitsByCompany.fetch(token.companyId)) ?? [];
      if (token.coolingUnitIds.length > 0) {
        const granted = new Set(token.coolingUnitIds);
        units = units.filter((unit) => granted.has(unit.id));
      }
      if (filters.cooling_unit_id !== undefined) {
        units = units.filter((unit) => unit.id === filters.cooling_unit_id);
        if (units.length === 0) throw notFound(`No cooling unit ${filters.cooling_unit_id} is readable with this token`);
      }
      if (filters.location_id !== undefined) {
        units = units.filter((unit) => unit.location_id === filters.location_id);
        if (units.length === 0) throw notFound(`No location ${filters.location_id} with units readable by this token`);
      }
      return { companyId: token.companyId, unitIds: units.map((unit) => unit.id) };
    },
  };
}

export type AccessControl = ReturnType<typeof createAccessControl>;
