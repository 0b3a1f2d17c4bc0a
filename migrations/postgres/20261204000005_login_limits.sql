-- As migrations/sqlite/20261204000025_login_limits.sql.
CREATE TABLE login_limits (
    account      TEXT   PRIMARY KEY,
    failures     BIGINT NOT NULL,
    window_start TEXT   COLLATE "C" NOT NULL
);
-- Windows that ended are deleted as attempts come (names that are no
-- account would otherwise pile up).
CREATE INDEX login_limits_window ON login_limits (window_start);

CREATE TABLE login_devices (
    token_hash   TEXT   PRIMARY KEY,
    user_id      BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   TEXT   COLLATE "C" NOT NULL DEFAULT strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
    failures     BIGINT NOT NULL DEFAULT 0,
    window_start TEXT   COLLATE "C"
);
CREATE INDEX login_devices_user ON login_devices (user_id, created_at);
