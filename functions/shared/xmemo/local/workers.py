"""Several gateway processes on one listening socket (pre-fork).

Powertools keeps the current event per process, so one process runs one handler call at
a time, like one Lambda container. Forked workers are the local stand-in for Lambda's
concurrency: each has its own function instances and store connection (SQLite in WAL
mode takes several processes), and the kernel spreads connections over them."""

from __future__ import annotations

import os
import signal
import sys
from socketserver import BaseServer


def serve_forked(server: BaseServer, workers: int) -> int:
    """Fork `workers` children that all serve `server`'s socket; the parent only waits and
    stops them on SIGINT/SIGTERM. Must be called before any thread or store exists."""
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:  # child
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                server.serve_forever(poll_interval=0.2)
            finally:
                os._exit(0)
        children.append(pid)

    def stop(signum, _frame) -> None:
        for pid in children:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = 0
    for pid in children:
        while True:
            try:
                _, code = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
            except ChildProcessError:
                code = 0
                break
        if os.waitstatus_to_exitcode(code) not in (0, -signal.SIGTERM):
            status = 1
            # one worker died on its own: stop the others rather than serve half a gateway
            stop(signal.SIGTERM, None)
    server.server_close()
    print("gateway stopped", file=sys.stderr)
    return status
