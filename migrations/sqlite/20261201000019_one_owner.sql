-- Exactly one owner, enforced by the database: concurrent first-run setup
-- requests each saw "no owner yet" and each created one (check, then
-- insert). A database made before this rule with several owners keeps the
-- first as owner; the others become members (with no project rights until
-- the owner grants them).
UPDATE users SET role = 'member'
 WHERE role = 'owner' AND id <> (SELECT MIN(id) FROM users WHERE role = 'owner');
CREATE UNIQUE INDEX users_one_owner ON users (role) WHERE role = 'owner';
