"""The embedded store survives restarts, writes atomically, and a crash leaves no half memory."""

import sqlite3
import textwrap
import threading

import pytest

from tests.conftest import make_principal
from tests.crashes import kill_after_acknowledged
from xmemo import tools
from xmemo.config import Settings
from xmemo.errors import StoreUnavailable
from xmemo.models import RecallInput, RememberInput, SearchInput
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore

ALICE = make_principal("alice")


def test_survives_restart(tmp_path, clock):
    path = tmp_path / "x.sqlite3"
    settings = Settings(data_dir=tmp_path, embedder="none")
    s1 = Services(settings, SQLiteStore(path), None, clock)
    ref = tools.remember(s1, ALICE, RememberInput(content="persist me across restarts")).memory.reference
    s1.store.close()
    s2 = Services(settings, SQLiteStore(path), None, clock)
    assert [h.reference for h in tools.search_memory(s2, ALICE, SearchInput(query="persist restarts")).results] == [ref]
    s2.store.close()


def test_failed_write_leaves_nothing(services, monkeypatch):
    """A failure between the row and its index entry rolls the whole memory back."""
    import xmemo.store.sqlite as mod

    def boom(_):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(mod.text, "stems", boom)
    with pytest.raises(RuntimeError):
        tools.remember(services, ALICE, RememberInput(content="half written?"))
    monkeypatch.undo()
    assert services.store.count() == 0
    assert services.store._conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == 0
    tools.remember(services, ALICE, RememberInput(content="half written?"))
    assert services.store.count() == 1


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from xmemo import tools
    from xmemo.auth import principal_from_claims
    from xmemo.config import Settings
    from xmemo.models import RememberInput
    from xmemo.services import Services
    from xmemo.store.sqlite import SQLiteStore

    path = Path(sys.argv[1])
    svc = Services(Settings(data_dir=path.parent, embedder="none"), SQLiteStore(path), None)
    p = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:write"})
    for i in range(100000):
        r = tools.remember(svc, p, RememberInput(content=f"crash test memory number {i} " + "pad " * 50))
        print(i, r.memory.reference, flush=True)  # acknowledged
    """
)


def test_sigkill_mid_writes_loses_no_acknowledged_write(tmp_path):
    path = tmp_path / "crash.sqlite3"
    acked = [fields[1] for fields in kill_after_acknowledged(WRITER, path, 150)]
    assert len(acked) >= 150, "the writer did not get going"
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    store = SQLiteStore(path)
    refs = {r[0] for r in store._conn.execute("SELECT reference FROM memories")}
    assert set(acked) <= refs
    fts = store._conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
    assert fts == len(refs), "every stored memory is indexed, none half"
    store.close()


def test_cache_and_memory_map_follow_the_settings(tmp_path):
    from xmemo.config import Settings
    from xmemo.services import make_store

    store = make_store(Settings(data_dir=tmp_path, embedder="none", sqlite_cache_mib=32, sqlite_mmap_mib=128))
    try:
        conn = store._conn
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == -32 * 1024
        assert conn.execute("PRAGMA mmap_size").fetchone()[0] == 128 * 1024 * 1024
    finally:
        store.close()


def test_by_default_no_part_of_the_file_is_memory_mapped(tmp_path):
    """The map bought no CPU at 100k or 1M memories and its pages counted in the process's
    RSS (docs/embedded-store-scale.md): reads go through the connection's page cache."""
    from xmemo.config import Settings
    from xmemo.services import make_store

    store = make_store(Settings(data_dir=tmp_path, embedder="none"))
    try:
        assert store._conn.execute("PRAGMA mmap_size").fetchone()[0] == 0
        assert store._conn.execute("PRAGMA cache_size").fetchone()[0] == -64 * 1024
    finally:
        store.close()


def _hold_write_lock(path, release: threading.Event) -> threading.Thread:
    """Another process's view of a fresh file: a connection in a write transaction (before
    WAL is on) until `release` is set; returns once the lock is held."""
    held = threading.Event()

    def hold():
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        other.execute("CREATE TABLE IF NOT EXISTS first_writer (x)")
        held.set()
        release.wait(30)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert held.wait(10)
    return thread


def test_opening_a_fresh_file_waits_for_another_writer(tmp_path):
    """Regression (CI): two gateway workers cold-starting on a fresh file at once; the one
    that lost the race for the WAL switch failed at once with "database is locked" (a 500),
    since SQLite's busy timeout does not cover a journal-mode change."""
    path = tmp_path / "fresh.sqlite3"
    release = threading.Event()
    holder = _hold_write_lock(path, release)
    threading.Timer(0.3, release.set).start()
    store = SQLiteStore(path, busy_timeout_ms=5000)
    holder.join()
    try:
        assert release.is_set(), "it opened only after the other writer let go"
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.count() == 0
    finally:
        store.close()


def test_a_file_locked_past_the_busy_timeout_is_store_unavailable(tmp_path):
    """Waiting has a bound: past it the store is busy (503 with Retry-After), not broken (500)."""
    path = tmp_path / "held.sqlite3"
    release = threading.Event()
    holder = _hold_write_lock(path, release)
    try:
        with pytest.raises(StoreUnavailable):
            SQLiteStore(path, busy_timeout_ms=200)
    finally:
        release.set()
        holder.join()
