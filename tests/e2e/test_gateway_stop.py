"""Stopping `xmemo serve` with Ctrl-C: the terminal signals the whole process group (the
gateway and its workers); the gateway closes its workers, leaves none behind, writes no
traceback and exits 0. (SIGTERM is covered by the two-worker identity test's fixture.)"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import pytest

from tests import ROOT
from xmemo.bench.load import child_pids
from xmemo.local.spawn import start_gateway

pytestmark = pytest.mark.e2e


def workers_of(pid: int) -> set[int]:
    """The worker processes among `pid`'s children (multiprocessing's resource tracker is
    a child too; it ends on its own once every process holding its pipe has ended)."""
    found: set[int] = set()
    for child in child_pids(pid):
        try:
            if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.add(child)
        except OSError:
            continue
    return found


def running(pid: int) -> bool:
    """Alive and not a zombie (an ended child of an ended parent waits here for a PID 1
    that may never reap it; it runs nothing)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_ctrl_c_stops_the_gateway_and_its_workers_cleanly(tmp_path):
    gw = start_gateway(tmp_path, {"XMEMO_GATEWAY_WORKERS": "2"}, cwd=ROOT, own_process_group=True)
    try:
        token = gw.token("ctrl-c", "memory:read", "memory:write")
        r = httpx.post(f"{gw.url}/v1/memories", json={"content": "written before Ctrl-C"}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert r.status_code == 201, r.text
        workers = workers_of(gw.process.pid)
        assert len(workers) == 2, "two worker processes run under the gateway"

        os.killpg(gw.process.pid, signal.SIGINT)
        assert gw.process.wait(timeout=20) == 0
    finally:
        if gw.process.poll() is None:
            gw.stop()
    log = (tmp_path / "gateway.log").read_text()
    assert "gateway stopped" in log
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log[-2000:]
    assert not [pid for pid in workers if running(pid)], "no worker outlives the gateway"
