-- Shared by every data endpoint.

-- name: liveUnitsOfCompany
-- the units a company-wide token reads (soft-deleted units are gone from the data surface)
SELECT id, location_id FROM cooling_units WHERE company_id = $1 AND NOT deleted ORDER BY id;

-- name: retiredUnitsOfCompany
-- soft-deleted units: they keep their history up to their deletion (docs/figures.md, "Deleted units")
SELECT id, location_id, deleted_at FROM cooling_units WHERE company_id = $1 AND deleted ORDER BY id;
