"""Loading and invoking the Lambda handlers in-process, like warm Lambda containers.

A Powertools resolver keeps the current event on itself, so one module instance must not
serve two requests at once, exactly as one Lambda container serves one invocation at a
time. Each function therefore gets a pool of "containers": separate instances of its
`app.py` module, created on demand (a cold start) and reused while warm."""

from __future__ import annotations

import importlib.util
import itertools
import queue
import threading
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from ..startup import settle
from .events import LambdaContext
from .template import Route

_instance_ids = itertools.count(1)

# Powertools' resolvers keep the current event in a class attribute (`BaseRouter.current_event`),
# i.e. once per process, whichever module instance runs: two invocations at once in one
# process would read each other's body and claims. Lambda never does that (one invocation
# per process); the gateway must not either, so every invocation holds this lock.
_INVOCATION_LOCK = threading.Lock()


class FunctionMissing(RuntimeError):
    """The template names a handler file that is not there (yet)."""


def load_handler(path: Path, attribute: str, function: str) -> Callable[[dict, Any], dict]:
    """A fresh module instance of `path` and its handler attribute (no sys.path edits)."""
    if not path.is_file():
        raise FunctionMissing(f"{function}: {path} does not exist")
    spec = importlib.util.spec_from_file_location(f"xmemo_lambda_{function}_{next(_instance_ids)}", path)
    assert spec and spec.loader
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, attribute)


class FunctionPool:
    """Up to `size` warm instances of one function's handler."""

    def __init__(self, route: Route, size: int = 8):
        self.route = route
        self.size = size
        self._idle: queue.LifoQueue = queue.LifoQueue()
        self._created = 0
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(size)

    @property
    def cold_starts(self) -> int:
        return self._created

    def _checkout(self) -> tuple[Callable[[dict, Any], dict], bool]:
        """An idle instance, or a new one (True: a cold start)."""
        try:
            return self._idle.get_nowait(), False
        except queue.Empty:
            pass
        with self._lock:
            self._created += 1
        attribute = self.route.handler.rsplit(".", 1)[1]
        return load_handler(self.route.handler_file, attribute, self.route.function), True

    def invoke(self, event: dict) -> dict:
        """Run one invocation on an idle (or new) instance; waits when all are busy. After a
        cold start's first invocation (which built the services, as Lambda's initialisation
        does) what it loaded is frozen out of the garbage collector's passes (`startup.settle`)."""
        with self._slots:
            handler, cold = self._checkout()
            try:
                context = LambdaContext(self.route.function, self.route.memory, self.route.timeout)
                with _INVOCATION_LOCK:
                    return handler(event, context)
            finally:
                if cold:
                    settle()
                self._idle.put(handler)
