// Turns a page's raw rows (one per check-out, crate, market survey, farmer, movement) into
// revenue, impact and users records with exact arithmetic (decimal.ts). Pure functions of plain
// data: run on a rollup thread (workers/rollup-thread.ts) or inline on the main thread
// (src/analytics/rollups.ts).
// These files import nothing of the project outside workers/: a rollup thread loads only what it
// computes with. (Under tsx on Node 20 a thread could load nothing else; Node 24 lifted that.)
//
// One file per job: rows.ts (row types, inputs, per-cell state), decimal.ts (exact minor-unit
// arithmetic), revenue.ts, impact.ts and users.ts (the rollups and their records), serialize.ts
// (revenue and impact JSON text); this one dispatches a page to its rollup and re-exports the
// public names.
import { rollupImpact } from './impact.js';
import { rollupRevenue } from './revenue.js';
import type { Cell, ImpactInput, Json, RevenueInput, UsersBucket, UsersInput } from './rows.js';
import { serializeImpact, serializeRevenue } from './serialize.js';
import { rollupUsers } from './users.js';

export { centsOf, centsToNumber, decimal, gcd, scaled } from './decimal.js';
export { HOUSEHOLD_TENTHS, type ImpactRecord, rollupImpact } from './impact.js';
export { type CurrencyTotal, type PaymentMethodTotal, type RevenueRecord, rollupRevenue } from './revenue.js';
export { rollupUsers } from './users.js';
export { compileSerializers } from './serialize.js';
export {
  type Cell,
  type CheckOutRow,
  type CrateRow,
  type FarmerRow,
  type ImpactInput,
  type JoinedRow,
  type Json,
  type MovementColumns,
  parseJson,
  type RevenueInput,
  rowsOf,
  type SurveyRow,
  type UsersBucket,
  type UsersInput,
} from './rows.js';

export type RollupTask =
  { kind: 'revenue'; input: RevenueInput } | { kind: 'impact'; input: ImpactInput } | { kind: 'users'; input: UsersInput };

/** The records of a task as JSON: text, or UTF-8 bytes where they are written as bytes (users). */
export function runRollup(task: RollupTask): Json<unknown[]> | Uint8Array {
  if (task.kind === 'revenue') return serializeRevenue(rollupRevenue(task.input));
  if (task.kind === 'impact') return serializeImpact(rollupImpact(task.input));
  return rollupUsers(task.input);
}

/** A query whose rows' `rows` column is JSON text (sql/queries/): one row of a row set, or a row set in parts (one row per unit). */
export interface RowsQuery {
  text: string;
  values: unknown[];
  /** the query's name in sql/queries/, set when the page is traced: its span's name on the thread */
  label?: string;
}

/** A page to roll up, with the queries of its rows rather than the rows: see rollup-thread.ts. */
export type RollupRequest =
  | { kind: 'revenue'; cells: Cell[]; checkOuts: RowsQuery }
  | { kind: 'impact'; cells: Cell[]; currency: string; country: string; crates: RowsQuery; surveys: RowsQuery; farmers: RowsQuery }
  | {
      kind: 'users';
      buckets: UsersBucket[];
      units: UsersInput['units'];
      joined: RowsQuery;
      checkIns: RowsQuery;
      checkOuts: RowsQuery;
    };

/**
 * Runs a request's queries through `textsOf` (the thread's pool, or the main one inline: every
 * row's `rows` column) and rolls the rows up.
 */
export async function rollUpFrom(request: RollupRequest, textsOf: (query: RowsQuery) => Promise<string[]>): Promise<string | Uint8Array> {
  // a row set that comes as one row (the users page's joined farmers)
  const textOf = async (query: RowsQuery) => (await textsOf(query))[0]!;
  if (request.kind === 'revenue') {
    return runRollup({ kind: 'revenue', input: { cells: request.cells, checkOuts: await textsOf(request.checkOuts) } });
  }
  if (request.kind === 'users') {
    const [joined, checkIns, checkOuts] = await Promise.all([
      textOf(request.joined),
      textsOf(request.checkIns),
      textsOf(request.checkOuts),
    ]);
    return runRollup({ kind: 'users', input: { buckets: request.buckets, units: request.units, joined, checkIns, checkOuts } });
  }
  const [crates, surveys, farmers] = await Promise.all([textsOf(request.crates), textsOf(request.surveys), textsOf(request.farmers)]);
  const { cells, currency, country } = request;
  return runRollup({ kind: 'impact', input: { cells, currency, country, crates, surveys, farmers } });
}
