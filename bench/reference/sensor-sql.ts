// The naive reference's sensor-data queries (the P2 baseline: "pg rows + JSON.stringify"), read
// straight from the raw readings table of migration 001; hourly and daily bucket the raw rows at
// query time (what the project's aggregates exist to avoid). OFFSET paging, count(*) for the total.
// When the sensor store of migrations 003_* renames the table or its columns, align these.
// Every query: $1 unit ids, $2 specification types, $3 from (inclusive), $4 to (exclusive);
// page queries also $5 page size, $6 offset. Records come in the API's order: time, unit, then
// specification_type alphabetically (as text in "C", not the enum's order), so pages hold the
// same records as the project's.

const FILTER = `cooling_unit_id = ANY($1::int[]) AND specification_type = ANY($2::specification_type[])
  AND recorded_at >= $3 AND recorded_at < $4`;

const bucketed = (unit: 'hour' | 'day') => ({
  rows: `SELECT date_trunc('${unit}', recorded_at) AS timestamp, cooling_unit_id, specification_type::text AS specification_type,
           avg(value) AS value, count(*)::int AS sample_count, min(value) AS min, max(value) AS max
         FROM sensor_readings WHERE ${FILTER}
         GROUP BY 1, 2, 3 ORDER BY 1, 2, specification_type::text COLLATE "C" LIMIT $5 OFFSET $6`,
  count: `SELECT count(*)::int AS total FROM (
           SELECT 1 FROM sensor_readings WHERE ${FILTER}
           GROUP BY date_trunc('${unit}', recorded_at), cooling_unit_id, specification_type) buckets`,
});

export const SENSOR_SQL = {
  raw: {
    rows: `SELECT recorded_at AS timestamp, cooling_unit_id, specification_type::text AS specification_type, value, 1 AS sample_count
           FROM sensor_readings WHERE ${FILTER}
           ORDER BY recorded_at, cooling_unit_id, specification_type::text COLLATE "C" LIMIT $5 OFFSET $6`,
    count: `SELECT count(*)::int AS total FROM sensor_readings WHERE ${FILTER}`,
  },
  hourly: bucketed('hour'),
  daily: bucketed('day'),
};
