"""Worker processes behind one local gateway: the local stand-in for Lambda's concurrency.

Powertools keeps the current event per process, so one process runs one handler call at
a time, like one Lambda container. With `XMEMO_GATEWAY_WORKERS` > 1 the gateway keeps
that many worker processes and hands every invocation to the next idle one, in arrival
order, as API Gateway hands requests to free containers. Requests are balanced per call,
not per connection, so a keep-alive client never waits on a busy worker while another
one idles (with workers sharing the listening socket, the kernel pinned each connection
to one process and the unlucky clients made the tail).

Workers are spawned, not forked from the threaded gateway, and each has its own function
instances and store connection (SQLite in WAL mode takes several processes). A worker
that dies costs the invocation it was running (a 502, as a Lambda crash does) and is
replaced; when the gateway exits, its workers see their pipe close and exit too."""

from __future__ import annotations

import multiprocessing
import queue
import signal
import sys
import threading
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from .functions import FunctionMissing, FunctionPool
from .template import Route


class HandlerCrashed(RuntimeError):
    """The handler raised, or its worker process died, during an invocation."""


@dataclass
class _Worker:
    process: Any  # multiprocessing.Process (spawn context)
    conn: Connection


def _serve(conn: Connection, routes: dict[str, Route]) -> None:
    """A worker's life: run each (function, event) it is sent, answer, repeat until the
    gateway closes the pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the gateway stops us
    pools: dict[str, FunctionPool] = {}
    while True:
        try:
            function, event = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            pool = pools.setdefault(function, FunctionPool(routes[function], size=1))
            reply: tuple[str, Any] = ("ok", pool.invoke(event))
        except FunctionMissing as exc:
            reply = ("missing", str(exc))
        except Exception as exc:
            frames = "".join(traceback.format_tb(exc.__traceback__)[-3:])
            reply = ("raised", f"{type(exc).__name__}\n{frames}")
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


class WorkerPool:
    """`size` worker processes and a FIFO queue of the idle ones."""

    def __init__(self, routes: list[Route], size: int):
        self._routes = {r.function: r for r in routes}
        self._context = multiprocessing.get_context("spawn")
        self._idle: queue.Queue[_Worker] = queue.Queue()  # waiters are served in arrival order
        self._all: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        for _ in range(size):
            self._idle.put(self._start())

    def _start(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(theirs, self._routes), daemon=True, name="xmemo-gateway-worker")
        process.start()
        theirs.close()
        worker = _Worker(process, ours)
        with self._lock:
            self._all.append(worker)
        return worker

    def invoke(self, route: Route, event: dict) -> dict:
        """The handler's response, run on the next idle worker; FunctionMissing when the
        handler file is absent, HandlerCrashed when it raised, ran past the function's
        timeout (the worker is then killed and replaced) or its process died."""
        worker = self._idle.get()
        try:
            worker.conn.send((route.function, event))
            if not worker.conn.poll(route.timeout):  # Lambda's timeout: the instance is stopped
                worker.process.kill()
                self._replace(worker)
                raise HandlerCrashed(f"Task timed out after {route.timeout} seconds")
            kind, value = worker.conn.recv()
        except (EOFError, OSError) as exc:
            self._replace(worker)
            raise HandlerCrashed(f"the worker process died during the call ({type(exc).__name__})") from None
        self._idle.put(worker)
        if kind == "ok":
            return value
        if kind == "missing":
            raise FunctionMissing(value)
        raise HandlerCrashed(value)

    def _replace(self, dead: _Worker) -> None:
        dead.conn.close()
        dead.process.join(timeout=1)
        with self._lock:
            if dead in self._all:
                self._all.remove(dead)
            if self._closed:
                return
        print(f"xmemo gateway: worker {dead.process.pid} exited ({dead.process.exitcode}); starting another", file=sys.stderr)
        threading.Thread(target=lambda: self._idle.put(self._start()), daemon=True).start()

    def close(self, timeout: float = 5.0) -> None:
        """Close every pipe (idle workers exit at once; a busy one after its call), then
        wait for the processes, terminating any that outlive `timeout`."""
        with self._lock:
            self._closed = True
            workers = list(self._all)
        for w in workers:
            w.conn.close()
        for w in workers:
            w.process.join(timeout)
            if w.process.is_alive():
                w.process.terminate()
                w.process.join(1)
