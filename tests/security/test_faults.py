"""Faults of the embedded store under concurrent load, end to end through the gateway:

- another process holds the SQLite write lock (busy; WAL readers keep reading), or grabs
  and releases it in bursts (slow): every
  call ends within its deadline, either answered or `503 store_unavailable` with
  `Retry-After` and the SPEC §6 body; after release every acknowledged write is stored
  exactly once and no refused write is there at all, in full or in part;
- the gateway (or several writer processes) killed with SIGKILL in the middle of 1,000
  concurrent writes: on restart the file opens cleanly, `integrity_check` is ok, no
  acknowledged write is lost or doubled and every stored memory is indexed.

Deadlines are generous bounds (the functions' Lambda timeout in template.yaml), not latency
assertions. The OpenSearch store's faults, end to end the same way: test_faults_opensearch.py."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway

from . import cases
from .faults import LAMBDA_TIMEOUT_S, Writers

pytestmark = pytest.mark.e2e

BUSY_MS = 250

LOCKER = textwrap.dedent(
    """
    import sqlite3, sys, time
    path, mode, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    end = time.monotonic() + seconds
    first = True
    while time.monotonic() < end:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("UPDATE meta SET value = value WHERE key = 'schema'")
        if first:
            print("locked", flush=True)
            first = False
        time.sleep(0.4 if mode == "flap" else max(0.0, end - time.monotonic()))
        conn.execute("ROLLBACK")
        if mode == "flap":
            time.sleep(0.15)
    conn.close()
    """
)


def lock_store(db: Path, mode: str, seconds: float) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", LOCKER, str(db), mode, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def stored_by_marker(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n_mem = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        n_fts = conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
        orphans = conn.execute("SELECT count(*) FROM memories m WHERE NOT EXISTS (SELECT 1 FROM memories_fts f WHERE f.rowid = m.rowid)").fetchone()[0]
        assert n_mem == n_fts and orphans == 0, "a memory without its index row (half written)"
        out: dict[str, int] = {}
        for (content,) in conn.execute("SELECT content FROM memories"):
            marker = content.split()[-1]
            out[marker] = out.get(marker, 0) + 1
        return out
    finally:
        conn.close()


@pytest.fixture
def fault_gateway(tmp_path):
    gw = start_gateway(tmp_path, {"XMEMO_SQLITE_BUSY_TIMEOUT_MS": str(BUSY_MS), "POWERTOOLS_LOG_LEVEL": "ERROR"}, cwd=ROOT)
    yield gw
    gw.stop()


@pytest.mark.parametrize("mode", ["hold", "flap"])
def test_locked_or_slow_store_answers_in_time_and_loses_nothing(fault_gateway, mode):
    gw = fault_gateway
    writers = Writers(gw.url, gw.token("fault-writer"))
    writers.run(20, 4)  # before the fault: the store exists, writes work
    db = gw.settings.data_dir / "xmemo.sqlite3"
    locker = lock_store(db, mode, 2.5)
    stop = threading.Event()
    during = writers.background(10_000, 8, stop=stop)
    locker.wait(timeout=30)
    stop.set()
    try:
        during.result(timeout=60)  # re-raises what any client asserted
    except TimeoutError:
        pytest.fail("a client hung")
    writers.run(20, 4)  # after recovery
    assert writers.slowest < LAMBDA_TIMEOUT_S, f"a call took {writers.slowest:.1f}s"
    if mode == "hold":
        assert writers.refused, "the lock was never felt"
    assert not writers.unknown
    got = stored_by_marker(db)
    lost = {m for m in writers.acked if got.get(m) != 1}
    assert not lost, f"acknowledged writes missing or doubled: {len(lost)}"
    assert not set(writers.refused) & set(got), "a write answered 503 is stored"


# ---------------------------------------------------------------------------------------
def test_sigkill_gateway_mid_1000_concurrent_writes(tmp_path):
    gw = start_gateway(tmp_path, {"POWERTOOLS_LOG_LEVEL": "ERROR"}, cwd=ROOT)
    writers = Writers(gw.url, gw.token("crash-writer"))
    worker = writers.background(1000, 16, reads=False)
    deadline = time.monotonic() + 120
    while len(writers.acked) < 250 and time.monotonic() < deadline and not worker.done():
        time.sleep(0.01)
    os.kill(gw.process.pid, signal.SIGKILL)
    gw.process.wait()
    worker.result(timeout=120)  # re-raises what any client asserted
    assert 250 <= len(writers.acked) < 1000, f"killed at {len(writers.acked)} acknowledged writes: not mid-run"
    db = tmp_path / "xmemo.sqlite3"
    got = stored_by_marker(db)  # integrity_check, every row indexed
    assert all(got.get(m) == 1 for m in writers.acked), "an acknowledged write was lost or doubled"
    assert all(n == 1 for n in got.values())
    # restart on the same file: it opens and serves the acknowledged writes
    again = start_gateway(tmp_path, {"POWERTOOLS_LOG_LEVEL": "ERROR"}, cwd=ROOT)
    try:
        h = {"Authorization": f"Bearer {again.token('crash-writer')}"}
        for marker in sorted(writers.acked)[:20]:
            r = httpx.post(f"{again.url}/v1/search", json={"query": marker}, headers=h, timeout=30)
            assert [x["content"].split()[-1] for x in r.json()["results"]] == [marker], r.text
        assert httpx.post(f"{again.url}/v1/memories", json={"content": "after the crash"}, headers=h, timeout=30).status_code == 201
    finally:
        again.stop()
    cases.record("crash[gateway acked]", len(writers.acked))


WRITER = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from xmemo import tools
    from xmemo.auth import principal_from_claims
    from xmemo.config import Settings
    from xmemo.models import RememberInput
    from xmemo.services import Services
    from xmemo.store.sqlite import SQLiteStore

    path, proc_id, per_thread = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    svc = Services(Settings(data_dir=path.parent, embedder="none"), SQLiteStore(path, 30000), None)
    p = principal_from_claims({"sub": "crash", "scope": "xmemo/memory:write"})
    out = threading.Lock()

    def write(t):
        for i in range(per_thread):
            marker = f"p{proc_id}t{t}n{i}"
            tools.remember(svc, p, RememberInput(content=f"concurrent crash write {marker}"))
            with out:
                print(marker, flush=True)  # acknowledged

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for th in threads: th.start()
    for th in threads: th.join()
    """
)


def test_sigkill_several_writer_processes_mid_1000_writes(tmp_path):
    """4 processes × 4 threads (1,000 writes planned) on one file, all killed at once."""
    db = tmp_path / "crash.sqlite3"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), str(i), "63"], stdout=subprocess.PIPE, text=True) for i in range(4)]
    acked: list[str] = []
    lock = threading.Lock()

    def reader(proc):
        for line in proc.stdout:
            with lock:
                acked.append(line.strip())

    readers = [threading.Thread(target=reader, args=(p,), daemon=True) for p in procs]
    for t in readers:
        t.start()
    deadline = time.monotonic() + 120
    while len(acked) < 300 and time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.01)
    for p in procs:
        os.kill(p.pid, signal.SIGKILL)
    for p in procs:
        p.wait()
    for t in readers:
        t.join(timeout=10)
    assert 300 <= len(acked) < 1000, f"killed at {len(acked)}: not mid-run"
    got = stored_by_marker(db)
    assert all(got.get(m) == 1 for m in acked), "an acknowledged write was lost or doubled"
    from xmemo.store.sqlite import SQLiteStore

    SQLiteStore(db).close()  # opens cleanly (schema, WAL recovery)
    cases.record("crash[processes acked]", len(acked))
