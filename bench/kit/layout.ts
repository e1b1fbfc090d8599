// The data set's ids as a pure function of its size (four companies, one heavy, their locations
// and units), so scenarios and the credential plan can be made before the database exists.
import type { DatasetSize } from './config.js';

export interface CompanyLayout {
  id: number;
  name: string;
  country: string;
  currency: string;
  locationIds: number[];
  /** live units, ascending */
  unitIds: number[];
  deletedUnitId: number;
}

/** Ids of everything, as a pure function of the size: scenarios can be planned before the build. */
export interface Layout {
  size: DatasetSize;
  companies: CompanyLayout[];
  /** Bench Alpha, the heavy company */
  heavy: CompanyLayout;
  /** units of Bench Alpha with 15-minute readings */
  sensorUnitIds: number[];
}

const COMPANIES = [
  { name: 'Bench Alpha', country: 'NG', currency: 'NGN' },
  { name: 'Bench Beta', country: 'IN', currency: 'INR' },
  { name: 'Bench Gamma', country: 'PH', currency: 'PHP' },
  { name: 'Bench Delta', country: 'KE', currency: 'KES' },
];
export const LOCATIONS_PER_COMPANY = 5;
/** operators are 100000 + location id; farmers 200000 + ...; employees 1.. */
export const OPERATOR_BASE = 100_000;
export const FARMER_BASE = 200_000;

export function layoutOf(size: DatasetSize): Layout {
  let nextUnit = 1;
  const companies = COMPANIES.map((company, index): CompanyLayout => {
    const id = index + 1;
    const count = id === 1 ? size.heavyUnits : size.otherUnits;
    const unitIds = Array.from({ length: count }, () => nextUnit++);
    return {
      id,
      ...company,
      locationIds: Array.from({ length: LOCATIONS_PER_COMPANY }, (_, k) => index * LOCATIONS_PER_COMPANY + k + 1),
      unitIds,
      deletedUnitId: 0,
    };
  });
  for (const company of companies) company.deletedUnitId = nextUnit++;
  const heavy = companies[0]!;
  return { size, companies, heavy, sensorUnitIds: heavy.unitIds.slice(0, size.sensorUnits) };
}
