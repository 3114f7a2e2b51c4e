"""Pydantic models that build their validators on first use, safely under threads.

A function uses one or two of the tool inputs and results, so they defer their build
(`defer_build`) and each function builds its own while it initialises. Elsewhere (the
local gateway, tests) the first call that needs a model builds it, and pydantic 2.13 does
not lock that: two threads meeting the same unbuilt model rebuild it at once and one can
fail (pydantic#13419). `DeferredModel` serialises the builds behind one lock, as pydantic's
own later fix does (pydantic#13438); a built model never takes it."""

from __future__ import annotations

import threading
from typing import Any

from pydantic import BaseModel, ConfigDict

_BUILD_LOCK = threading.RLock()


class DeferredModel(BaseModel):
    model_config = ConfigDict(defer_build=True)

    @classmethod
    def model_rebuild(cls, *, force: bool = False, raise_errors: bool = True, _parent_namespace_depth: int = 2,
                      _types_namespace: Any = None) -> bool | None:
        """`BaseModel.model_rebuild` under the lock (pydantic's lazy build calls it too)."""
        if cls.__pydantic_complete__ and not force:
            return None
        depth = _parent_namespace_depth + 1 if _parent_namespace_depth > 0 else 0  # this frame, skipped
        with _BUILD_LOCK:
            return super().model_rebuild(force=force, raise_errors=raise_errors, _parent_namespace_depth=depth,
                                         _types_namespace=_types_namespace)
