"""A writer process killed with SIGKILL mid-work: the crash tests of the stores share it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def kill_after_acknowledged(writer: str, path: Path, count: int, timeout: float = 60) -> list[list[str]]:
    """Run `python -c writer path`, read the lines it prints once each write is acknowledged
    (split into fields), and SIGKILL it after `count` of them (or at `timeout`)."""
    proc = subprocess.Popen([sys.executable, "-c", writer, str(path)], stdout=subprocess.PIPE, text=True)
    acked: list[list[str]] = []
    deadline = time.monotonic() + timeout
    while len(acked) < count and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        acked.append(line.split())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return acked
