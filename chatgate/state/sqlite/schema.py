"""SQLite schema of the state database (journal, sessions, DLQ, dead targets, pairing, the
privacy audit trail)."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 1

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS inbound (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    channel TEXT NOT NULL,
    chat_id TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    received_at REAL NOT NULL,
    state TEXT NOT NULL,
    stage TEXT,
    reason TEXT,
    session TEXT,
    message_json TEXT NOT NULL,
    reply_json TEXT,
    delivery TEXT,
    delivery_ids TEXT,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS inbound_state ON inbound(state) WHERE state IN ('pending', 'answered');
CREATE INDEX IF NOT EXISTS inbound_sender ON inbound(channel, sender_id, seq);

CREATE TABLE IF NOT EXISTS sessions (
    key TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    message_count INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT NOT NULL,
    epoch INTEGER NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    name TEXT,
    source TEXT,
    at REAL NOT NULL,
    meta TEXT,
    UNIQUE (session_key, epoch, source, role)
);
CREATE INDEX IF NOT EXISTS messages_session ON messages(session_key, epoch, id);

CREATE TABLE IF NOT EXISTS dlq (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at REAL NOT NULL,
    channel TEXT NOT NULL,
    target_json TEXT NOT NULL,
    message_json TEXT NOT NULL,
    kind TEXT NOT NULL,
    error TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    inbound_key TEXT,
    session TEXT
);

CREATE TABLE IF NOT EXISTS dead_targets (
    address TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    error TEXT NOT NULL,
    first_at REAL NOT NULL,
    last_at REAL NOT NULL,
    count INTEGER NOT NULL DEFAULT 1
);

CREATE TABLE IF NOT EXISTS pairing_pending (
    channel TEXT NOT NULL,
    code TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    sender_name TEXT NOT NULL DEFAULT '',
    chat_id TEXT NOT NULL DEFAULT '',
    issued_at REAL NOT NULL,
    PRIMARY KEY (channel, code)
);
CREATE TABLE IF NOT EXISTS pairing_approved (
    channel TEXT NOT NULL,
    sender_id TEXT NOT NULL,
    sender_name TEXT NOT NULL DEFAULT '',
    approved_at REAL NOT NULL,
    notified INTEGER NOT NULL DEFAULT 0,
    chat_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (channel, sender_id)
);
CREATE TABLE IF NOT EXISTS pairing_failures (channel TEXT NOT NULL, at REAL NOT NULL);

CREATE TABLE IF NOT EXISTS channel_facts (
    channel TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (channel, key)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS chat_pauses (
    chat TEXT PRIMARY KEY,
    since REAL NOT NULL,
    until REAL,
    paused_by TEXT NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS callbacks (
    ref TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created_at REAL NOT NULL
);

CREATE TABLE IF NOT EXISTS approvals (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    prompt_channel TEXT NOT NULL,
    prompt_chat TEXT NOT NULL,
    state TEXT NOT NULL,
    expires_at REAL NOT NULL,
    created_at REAL NOT NULL,
    decided_by TEXT,
    decided_at REAL,
    prompt_ids TEXT,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approvals_chat ON approvals(prompt_channel, prompt_chat)
    WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS approvals_key ON approvals(key);

CREATE TABLE IF NOT EXISTS config_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    data TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS privacy_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    data TEXT NOT NULL
);
"""


# Columns added after a table first shipped: (table, column, declaration). A database written by
# an older version gains them at open; older code ignores them.
_ADDED_COLUMNS = (("messages", "meta", "TEXT"),)


def apply_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(_DDL)
    for table, column, decl in _ADDED_COLUMNS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")
    conn.execute(
        "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
        (str(SCHEMA_VERSION),),
    )
