// The units an analytics request reports on: the live units the access layer allows
// (request.unitScope), plus the soft-deleted units the same request would have read while they
// were live, each with the instant its history ends (docs/figures.md, "Deleted units").
import type { AccessControl, RetiredUnit, UnitScope } from '../data-surface/authorize.js';
import type { AuthenticatedToken } from '../tokens/authenticator.js';

export interface ReportingUnit {
  id: number;
  /** when it was soft-deleted (ms since the epoch); null for a live unit */
  deletedAt: number | null;
}

export interface ReportingScope {
  companyId: number;
  /** ascending id: the live units of the access scope and the retired units with history (read-only: may be shared) */
  units: readonly ReportingUnit[];
}

/** A unit reports on a bucket that began while it was live (a bucket is a UTC day's 00:00 in ms). */
export const reportsOn = (unit: ReportingUnit, bucketStart: number) => unit.deletedAt === null || bucketStart < unit.deletedAt;

export type { RetiredUnit };

export interface ReportingRequest {
  unitScope: UnitScope;
  apiToken: Pick<AuthenticatedToken, 'coolingUnitIds'>;
  query: { cooling_unit_id?: number | undefined; location_id?: number | undefined };
}

/**
 * The retired units join what the access layer resolved under the same rules it applies to live
 * ones: the token's company, its granted units when it is restricted, the location when one is
 * asked. A cooling_unit_id names one live unit (a deleted one is 404 there), so it adds none.
 */
const liveUnitsOfList = new WeakMap<readonly number[], readonly ReportingUnit[]>();
function liveUnits(unitIds: readonly number[]): readonly ReportingUnit[] {
  let units = liveUnitsOfList.get(unitIds);
  if (!units) liveUnitsOfList.set(unitIds, (units = unitIds.map((id) => ({ id, deletedAt: null }))));
  return units;
}

/**
 * A company-wide token without a location filter reads the company's cached live list and its
 * cached retired list, so its units are a function of those two lists alone: built once per pair
 * rather than per request (a Set, a copy and a sort of every unit, ~8 KB a request at 100 units).
 */
const companyWideUnits = new WeakMap<readonly number[], { retired: readonly RetiredUnit[]; units: readonly ReportingUnit[] }>();

export function reportingScope(request: ReportingRequest, retired: readonly RetiredUnit[]): ReportingScope {
  const { unitScope, apiToken, query } = request;
  // the common case (no unit ever deleted, or a single unit asked for): the live units as they
  // are, built once per (shared, cached) id list rather than per request
  if (retired.length === 0 || query.cooling_unit_id !== undefined)
    return { companyId: unitScope.companyId, units: liveUnits(unitScope.unitIds) };
  const companyWide = apiToken.coolingUnitIds.length === 0 && query.location_id === undefined;
  const built = companyWide ? companyWideUnits.get(unitScope.unitIds) : undefined;
  if (built?.retired === retired) return { companyId: unitScope.companyId, units: built.units };
  const live = new Set(unitScope.unitIds);
  const granted = apiToken.coolingUnitIds.length > 0 ? new Set(apiToken.coolingUnitIds) : null;
  const history = retired.filter(
    (unit) =>
      !live.has(unit.id) &&
      (granted === null || granted.has(unit.id)) &&
      (query.location_id === undefined || unit.location_id === query.location_id),
  );
  const units: ReportingUnit[] = [
    ...liveUnits(unitScope.unitIds),
    ...history.map((unit) => ({ id: unit.id, deletedAt: unit.deleted_at.getTime() })),
  ];
  units.sort((a, b) => a.id - b.id);
  if (companyWide) companyWideUnits.set(unitScope.unitIds, { retired, units });
  return { companyId: unitScope.companyId, units };
}

/**
 * The company's retired units come from the unit directory (src/data-surface/authorize.ts): read
 * on the primary (a replica's lag must not hide a deletion), cached per process and dropped the
 * moment a change is announced (LISTEN/NOTIFY), so a deleted unit's history shows at once without
 * a query per request.
 */
export async function resolveReportingScope(
  access: Pick<AccessControl, 'retiredUnits'>,
  request: ReportingRequest,
): Promise<ReportingScope> {
  if (request.query.cooling_unit_id !== undefined) return reportingScope(request, []);
  return reportingScope(request, await access.retiredUnits(request.unitScope.companyId));
}
