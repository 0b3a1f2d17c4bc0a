-- Failed logins, shared by every process on the database (issue #40):
-- `login_limits` counts the password checks made for an account from
-- browsers it does not know, in fixed windows; `login_devices` are the
-- browsers that logged in to an account before (a random token in an
-- HttpOnly cookie, kept as its SHA-256 hash), each with its own count, so
-- that guessing from elsewhere never locks the rightful user out.
CREATE TABLE login_limits (
    account      TEXT    PRIMARY KEY,
    failures     INTEGER NOT NULL,
    window_start TEXT    NOT NULL
);
-- Windows that ended are deleted as attempts come (names that are no
-- account would otherwise pile up).
CREATE INDEX login_limits_window ON login_limits (window_start);

CREATE TABLE login_devices (
    token_hash   TEXT    PRIMARY KEY,
    user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at   TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    failures     INTEGER NOT NULL DEFAULT 0,
    window_start TEXT
);
CREATE INDEX login_devices_user ON login_devices (user_id, created_at);
