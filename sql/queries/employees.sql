-- name: userForAuth
SELECT id, company_id, role, is_active FROM users WHERE id = $1;

-- name: employeeProfile
-- GET /api/v1/me: the signed-in employee and their company, as the console's header names them
SELECT u.id AS user_id, nullif(btrim(concat_ws(' ', u.first_name, u.last_name)), '') AS name,
       c.id AS company_id, c.name AS company_name
FROM users u
JOIN companies c ON c.id = u.company_id
WHERE u.id = $1;
