// PostgreSQL's `integer` (int4) bound: every id column is one, so no id or page past it can exist.
export const MAX_INT4 = 2_147_483_647;
