// What a rollup reads: the row sets as PostgreSQL's JSON text, the page's cells, and the per-cell
// state both rollups keep while folding the rows in.
// Imports nothing of the project outside workers/ (see index.ts).

/**
 * JSON text of a T. Rows arrive as a few (PostgreSQL's json_agg of json_build_array, in the column
 * order of the row types below; one per unit where a page's rows run to megabytes) and records
 * leave as one: strings cross between the event loop and the worker, never thousands of objects
 * to clone.
 */
export type Json<T> = string & { readonly jsonOf?: T };

export const parseJson = <T>(json: Json<T>): T => JSON.parse(json) as T;

/** The rows of a row set that arrives in parts, one part parsed at a time. */
export function* rowsOf<Row>(parts: Json<Row[]>[]): Generator<Row> {
  for (const part of parts) yield* parseJson(part);
}

export interface Cell {
  cooling_unit_id: number;
  period_start: string;
  period_end: string;
}

export type CheckOutRow = [
  periodStart: string,
  unitId: number,
  currency: string,
  coolingFees: string,
  discount: string,
  paid: boolean,
  paymentMethod: string | null,
];
export type CrateRow = [periodStart: string, unitId: number, farmerId: number, kg: string, factorWithout: string, factorWith: string];
export type SurveyRow = [
  periodStart: string,
  unitId: number,
  farmerId: number,
  currency: string,
  sellingPricePerUnit: string,
  kgPerUnit: string,
  kgSold: string,
  kgLost: string,
];
/**
 * A farmer of a bucket with the farmer's baseline for the bucket: one per distinct (bucket, unit,
 * farmer) with a movement (`served`), and one per market survey of the bucket whose farmer may
 * have had none there (not served: the row only carries the baseline the survey's income needs).
 */
export type FarmerRow = [
  periodStart: string,
  unitId: number,
  farmerId: number,
  served: boolean,
  lossShare: string | null,
  baselineCurrency: string | null,
  baselinePricePerKg: string | null,
];

/** one per (day, farmers): day is an offset from the page's first day, -1 for any day before it */
export type JoinedRow = [day: number, farmers: number];
/** movements of a page as three parallel columns: day offset from the page's first day, unit, farmer */
export type MovementColumns = [days: number[], unitIds: number[], farmerIds: number[]];

export interface RevenueInput {
  cells: Cell[];
  /** in parts (one per unit), in no particular order */
  checkOuts: Json<CheckOutRow[]>[];
}

export interface ImpactInput {
  cells: Cell[];
  /** the company's currency (income_increase is in it) and country (household size) */
  currency: string;
  country: string;
  /** each row set in parts (one per unit), in no particular order */
  crates: Json<CrateRow[]>[];
  surveys: Json<SurveyRow[]>[];
  farmers: Json<FarmerRow[]>[];
}

/** A users bucket, its days as offsets from the page's first day. */
export interface UsersBucket {
  period_start: string;
  period_end: string;
  firstDay: number;
  lastDay: number;
  /** false for a bucket that has not begun: its registered_users is null (docs/figures.md) */
  elapsed: boolean;
}

export interface UsersInput {
  buckets: UsersBucket[];
  /**
   * The units reported on, ascending id, each with how many of the page's buckets, from the
   * first, it reports on: all of them for a live unit, those begun before its deletion for a
   * deleted one.
   */
  units: [id: number, buckets: number][];
  /** farmers of the units' population by the day they joined */
  joined: Json<JoinedRow[]>;
  /** the page's movements in parts (one per unit), in no particular order */
  checkIns: Json<MovementColumns>[];
  checkOuts: Json<MovementColumns>[];
}

/**
 * Per-cell state, found by period and unit: nested maps rather than one map keyed by a
 * "period/unit" string, which cost a string built and hashed for every row.
 */
export class CellGrid<T> {
  private readonly periods = new Map<string, Map<number, T>>();

  constructor(cells: Cell[], create: () => T) {
    for (const cell of cells) {
      let units = this.periods.get(cell.period_start);
      if (!units) this.periods.set(cell.period_start, (units = new Map()));
      units.set(cell.cooling_unit_id, create());
    }
  }

  /** undefined for a bucket x unit of the query that is not on this page */
  get(periodStart: string, unitId: number): T | undefined {
    return this.periods.get(periodStart)?.get(unitId);
  }
}
