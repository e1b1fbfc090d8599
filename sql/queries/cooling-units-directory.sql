-- The company's live cooling units with their location: what a Registered Employee may restrict a
-- token to (GET /api/v1/cooling-units). "Live" as token creation checks it: the unit not deleted.

-- name: liveUnitsPage
SELECT u.id, u.name, l.id AS location_id, l.name AS location_name
FROM cooling_units u
JOIN locations l ON l.id = u.location_id AND l.company_id = u.company_id
WHERE u.company_id = $1 AND NOT u.deleted
ORDER BY u.id
LIMIT $2 OFFSET $3;

-- name: countLiveUnits
SELECT count(*)::int AS total_count FROM cooling_units WHERE company_id = $1 AND NOT deleted;
