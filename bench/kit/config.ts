// The two sizes of the benchmark, --quick and full, and the data set's ids as a function of its
// size (layoutOf), so scenarios and the credential plan are made before the database exists.
export type Mode = 'quick' | 'full';
export type Server = 'project' | 'reference';

export interface DatasetSize {
  /** units of the heavy company (Bench Alpha); the other three companies get `otherUnits` each */
  heavyUnits: number;
  otherUnits: number;
  /** check-ins per unit per day, over the 366-day window (each with 2 crates and a check-out) */
  checkInsPerDay: number;
  farmersPerCompany: number;
  /** units of Bench Alpha with 15-minute readings over the window (2 kinds): ~1.05 M rows for 15 */
  sensorUnits: number;
}

export interface KitConfig {
  mode: Mode;
  /** seconds of each measured load run */
  seconds: number;
  /** project/reference order of the measured runs of one scenario; the next scenario mirrors it */
  order: Server[];
  dataset: DatasetSize;
  /** revoke-while-hammering rounds (P7), one fresh token each */
  revocationRounds: number;
  /** time limit for each bench/sensor-*.ts child (P4, P6) */
  sensorScriptTimeoutMs: number;
  /** the whole run's budget: the sensor scripts get what is left of it (quick mode) */
  budgetSeconds: number | null;
}

export function kitConfig(mode: Mode, secondsOverride?: number): KitConfig {
  if (mode === 'quick') {
    return {
      mode,
      seconds: secondsOverride ?? 3,
      order: ['project', 'reference'],
      dataset: { heavyUnits: 40, otherUnits: 10, checkInsPerDay: 4, farmersPerCompany: 2000, sensorUnits: 15 },
      revocationRounds: 10,
      sensorScriptTimeoutMs: 60_000,
      budgetSeconds: 165,
    };
  }
  return {
    mode,
    seconds: secondsOverride ?? 15,
    order: ['project', 'reference', 'reference', 'project'],
    dataset: { heavyUnits: 100, otherUnits: 20, checkInsPerDay: 6, farmersPerCompany: 4000, sensorUnits: 15 },
    revocationRounds: 30,
    sensorScriptTimeoutMs: 300_000,
    budgetSeconds: null,
  };
}

/** The analytics window every scenario reads: 366 fixed days, so runs compare across dates. */
export const WINDOW = { first: '2025-01-01', last: '2026-01-01', days: 366 } as const;

/** The service's per-token limit (src/rate-limit/limits.ts): the budget every token is planned on. */
export const TOKEN_LIMIT_PER_MINUTE = 100;
export const MANAGEMENT_WRITES_PER_MINUTE = 120;

/** Workers of each cluster, project and reference alike (WORKERS=2). */
export const WORKERS = 2;

/** The one JWT secret of the benchmark cluster and reference (HS256, >= 32 characters). */
export const BENCH_JWT_SECRET = 'bench-kit-secret-bench-kit-secret-0000';

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
