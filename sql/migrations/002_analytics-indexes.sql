-- Up Migration
-- The users analytics' farmer population (farmers registered by a unit's operators, or who ever
-- checked in at a unit) reads these instead of every check-in a unit ever had.
CREATE INDEX check_ins_unit_farmer_idx ON check_ins (cooling_unit_id, farmer_id);
CREATE INDEX users_registered_by_farmer_idx ON users (registered_by) WHERE role = 'FARMER';

-- Down Migration
DROP INDEX users_registered_by_farmer_idx;
DROP INDEX check_ins_unit_farmer_idx;
