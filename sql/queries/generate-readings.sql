-- `npm run generate-readings` (src/cli/generate-readings.ts): the company whose live units get
-- readings (its units: company-units.sql, liveUnitsOfCompany).

-- name: companyById
SELECT id, name FROM companies WHERE id = $1;

-- name: firstCompanyWithLiveUnits
-- without --company: the first company, by id, with a unit to give readings to
SELECT c.id, c.name
FROM companies c
WHERE EXISTS (SELECT 1 FROM cooling_units u WHERE u.company_id = c.id AND NOT u.deleted)
ORDER BY c.id
LIMIT 1;
