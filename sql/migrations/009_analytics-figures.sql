-- Up Migration
-- Indexes for the analytics as docs/figures.md defines them.

-- A page of the users analytics reads the movements of every unit it reports on over its days
-- (100 days x 1,000 units: ~100,000 check-ins and check-outs) for their unit, day and farmer: with
-- the farmer in the (unit, time) indexes that is an index-only scan instead of a visit to every
-- row's heap page (bench/analytics-scale.ts, P10). The impact and utilization farmer counts read
-- the same columns. Same keys as the indexes they replace, so no query loses one.
CREATE INDEX check_ins_unit_time_farmer_idx ON check_ins (cooling_unit_id, checked_in_at) INCLUDE (farmer_id);
DROP INDEX check_ins_unit_time_idx;
CREATE INDEX check_outs_unit_time_farmer_idx ON check_outs (cooling_unit_id, checked_out_at) INCLUDE (farmer_id);
DROP INDEX check_outs_unit_time_idx;

-- Impact dates a market survey by when it was taken: a page's surveys are found by surveyed_at.
CREATE INDEX market_surveys_surveyed_at_idx ON market_surveys (surveyed_at);

-- A deleted unit keeps its history: every analytics request reads its company's deleted units
-- (the live ones have cooling_units_company_idx).
CREATE INDEX cooling_units_company_deleted_idx ON cooling_units (company_id) WHERE deleted;

-- Down Migration
DROP INDEX cooling_units_company_deleted_idx;
DROP INDEX market_surveys_surveyed_at_idx;
CREATE INDEX check_outs_unit_time_idx ON check_outs (cooling_unit_id, checked_out_at);
DROP INDEX check_outs_unit_time_farmer_idx;
CREATE INDEX check_ins_unit_time_idx ON check_ins (cooling_unit_id, checked_in_at);
DROP INDEX check_ins_unit_time_farmer_idx;
