-- POST /v1/users/validate-cooling-user-id/: public, so it answers one boolean and nothing else.

-- name: isActiveFarmerCode
-- $1 user code. Valid: an active FARMER holds it (operators and employees have no user code;
-- a deactivated farmer's code is no longer valid). One index probe (users.user_code is UNIQUE)
-- whatever the answer, so the time taken says no more than the answer does.
SELECT EXISTS (
  SELECT 1 FROM users WHERE user_code = $1 AND role = 'FARMER' AND is_active
) AS valid;
