// The records' JSON text, written by fast-json-stringify serialisers compiled once from a schema
// of the record shapes. Imports nothing of the project outside workers/ (see index.ts).
//
// fast-json-stringify from a schema of the records: ~3x JSON.stringify on these fixed shapes,
// the largest cost of a small page after the query. Every property is listed, in the order the
// rollups build the records (the routes' zod schemas document the same fields), and required, so
// the output is JSON.stringify's byte for byte (test/analytics/rollups.test.ts compares them).
// Compiled on first use, fast-json-stringify (and the Ajv it loads) with them: a process that
// rolls nothing up inline (an API worker until its first small page, a test of other routes)
// neither loads nor compiles them. A rollup thread compiles them as it starts (compileSerializers).
import type { Schema } from 'fast-json-stringify';
import { compiledOnFirstUse } from '../fast-json.js';
import type { ImpactRecord } from './impact.js';
import type { RevenueRecord } from './revenue.js';

const integer = { type: 'integer' } as const;
const number = { type: 'number' } as const;
const string = { type: 'string' } as const;
const nullable = <T extends { type: string }>(schema: T) => ({ type: [schema.type, 'null'] });
const objectOf = (properties: Record<string, unknown>) => ({ type: 'object', properties, required: Object.keys(properties) });

const cellProperties = { cooling_unit_id: integer, period_start: string, period_end: string };

const revenueSchema = {
  type: 'array',
  items: objectOf({
    ...cellProperties,
    check_outs: integer,
    currency_totals: {
      type: 'array',
      items: objectOf({
        currency: string,
        total_revenue: number,
        paid_revenue: number,
        pending_revenue: number,
        cooling_fees: number,
        discounts: number,
        check_outs: integer,
        paid_check_outs: integer,
        pending_check_outs: integer,
      }),
    },
    payment_methods: {
      type: 'array',
      items: objectOf({ payment_method: nullable(string), currency: string, total_revenue: number, check_outs: integer }),
    },
  }),
} as Schema;

const impactSchema = {
  type: 'array',
  items: objectOf({
    ...cellProperties,
    currency: string,
    kg_checked_in: number,
    food_loss_prevented_kg: number,
    market_loss_share: nullable(number),
    income_increase: number,
    co2_reduction_kg: number,
    farmers_served: integer,
    community_served: integer,
    market_surveys: integer,
  }),
} as Schema;

/** Both serialisers, compiled by the first call. */
export const compileSerializers = compiledOnFirstUse({ revenue: revenueSchema, impact: impactSchema });

export const serializeRevenue = (records: RevenueRecord[]): string => compileSerializers().revenue(records);
export const serializeImpact = (records: ImpactRecord[]): string => compileSerializers().impact(records);
