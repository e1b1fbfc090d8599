-- name: userForAuth
SELECT id, company_id, role, is_active FROM users WHERE id = $1;
