"""Where the authorization server keeps registrations, pending logins, codes and refresh
bindings: a small key-value protocol with expiry, and its SQLite adapter for the local
data directory (the DynamoDB adapter is `oauth.dynamo`).

Keys of secrets (codes, login ids, refresh tokens) are their SHA-256 digests, so the
store never holds a usable code or token. `take` is the only way to read a code or a
pending login: it deletes atomically, so each is usable once."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol


def digest(secret: str) -> str:
    """The key a secret is stored under."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class StateStore(Protocol):
    def put(self, kind: str, key: str, item: dict[str, Any], ttl: int | None) -> None:
        """Store `item` (JSON-able) under (kind, key), expiring `ttl` seconds from now (None: never)."""

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """The unexpired item, or None."""

    def take(self, kind: str, key: str) -> dict[str, Any] | None:
        """Delete and return the unexpired item, atomically: at most one caller gets it."""

    def count(self, kind: str, key: str, ttl: int) -> int:
        """Add one to a counter that expires `ttl` seconds after it was created; the new value."""


class SqliteState:
    """The local gateway's state, one table in `<data_dir>/gateway/oauth.sqlite3`."""

    def __init__(self, path: Path, clock=time.time):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._clock = clock
        self._local = threading.local()
        with self._db() as db:
            db.execute("CREATE TABLE IF NOT EXISTS oauth_state (kind TEXT, key TEXT, item TEXT, expires_at REAL,"
                       " PRIMARY KEY (kind, key))")

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=5, isolation_level=None)
            self._local.db = db
        return db

    def _expiry(self, ttl: int | None) -> float | None:
        return None if ttl is None else self._clock() + ttl

    def put(self, kind: str, key: str, item: dict[str, Any], ttl: int | None) -> None:
        self._db().execute("DELETE FROM oauth_state WHERE expires_at <= ?", (self._clock(),))  # what TTL does on AWS
        self._db().execute("INSERT OR REPLACE INTO oauth_state VALUES (?, ?, ?, ?)",
                           (kind, key, json.dumps(item), self._expiry(ttl)))

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        row = self._db().execute("SELECT item, expires_at FROM oauth_state WHERE kind = ? AND key = ?", (kind, key)).fetchone()
        return self._live(row)

    def take(self, kind: str, key: str) -> dict[str, Any] | None:
        row = self._db().execute("DELETE FROM oauth_state WHERE kind = ? AND key = ? RETURNING item, expires_at",
                                 (kind, key)).fetchone()
        return self._live(row)

    def count(self, kind: str, key: str, ttl: int) -> int:
        db = self._db()
        now = self._clock()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("DELETE FROM oauth_state WHERE kind = ? AND key = ? AND expires_at <= ?", (kind, key, now))
            db.execute("INSERT INTO oauth_state VALUES (?, ?, '0', ?) ON CONFLICT (kind, key) DO NOTHING",
                       (kind, key, now + ttl))
            db.execute("UPDATE oauth_state SET item = CAST(item AS INTEGER) + 1 WHERE kind = ? AND key = ?", (kind, key))
            value = db.execute("SELECT item FROM oauth_state WHERE kind = ? AND key = ?", (kind, key)).fetchone()[0]
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return int(value)

    def _live(self, row) -> dict[str, Any] | None:
        if row is None or (row[1] is not None and row[1] <= self._clock()):
            return None
        return json.loads(row[0])
