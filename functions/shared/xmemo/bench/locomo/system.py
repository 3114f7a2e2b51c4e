"""XMemo as the benchmark drives it: a fresh store (SQLite unless given) and owner per conversation, every
turn through the real `remember`, every question through the real `recall` and
`recall_context`. Results are mapped back to the turns' ids by reference."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Sequence

import numpy as np

from ... import tools
from ...auth import principal_from_claims
from ...config import Settings
from ...embedding import Embedder
from ...models import ContextInput, RecallInput, RememberInput
from ...services import Services
from ...store.base import MemoryStore
from ...store.sqlite import SQLiteStore
from .data import Turn


class VectorCache:
    """An embedder that embeds each distinct text once: turns are embedded in batches up
    front and the same vectors serve `remember` and the dense baseline. A question's
    vector is kept only until `forget_query`, so each timed call that should pay for its
    query embedding does. With `path`, vectors persist between runs (quick experiments;
    latency then excludes query embedding and the report says so)."""

    def __init__(self, inner: Embedder, path: Path | None = None, batch: int = 32):
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.persistent = path is not None
        self._path = path / f"vectors-{inner.name}.npz" if path is not None else None
        self._batch = batch
        self._passages: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}
        if self._path is not None and self._path.exists():
            with np.load(self._path) as saved:
                for kind, table in (("p", self._passages), ("q", self._queries)):
                    table.update(zip(saved[f"{kind}_keys"].tolist(), saved[f"{kind}_vectors"]))

    def prime(self, texts: Sequence[str], progress=None) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._passages))
        for start in range(0, len(missing), self._batch):
            chunk = missing[start : start + self._batch]
            self._passages.update(zip(chunk, self.inner.embed_passages(chunk)))
            if progress is not None:
                progress.update(len(chunk))
        if progress is not None:
            progress.update(len(texts) - len(missing))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.prime(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self._passages[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]

    def forget_query(self, text: str) -> None:
        if not self.persistent:
            self._queries.pop(text, None)

    def save(self) -> None:
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {}
        for kind, table in (("p", self._passages), ("q", self._queries)):
            arrays[f"{kind}_keys"] = np.array(list(table), dtype=str)
            arrays[f"{kind}_vectors"] = (
                np.stack(list(table.values())) if table else np.zeros((0, self.dimension), np.float32)
            )
        np.savez(self._path, **arrays)


class _Clock:
    """The Services clock: set to each turn's date while storing, so the session date is
    the memory's `created_at` (there is no public `created_at` input)."""

    def __init__(self) -> None:
        self.now = datetime(2000, 1, 1, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now


class XMemoSystem:
    """One conversation's store, owner and reference → turn-id map."""

    def __init__(self, settings: Settings, embedder: Embedder | None, folder: Path, owner: str, store: MemoryStore | None = None):
        self.store = store or SQLiteStore(
            folder / "xmemo.sqlite3", settings.sqlite_busy_timeout_ms, context_weight=settings.context_weight
        )
        self.clock = _Clock()
        self.svc = Services(settings, self.store, embedder, self.clock)
        scopes = " ".join(f"{settings.resource_server}/memory:{s}" for s in ("read", "write"))
        self.principal = principal_from_claims({"sub": owner, "scope": scopes}, settings.resource_server)
        self.ids: dict[str, list[str]] = {}  # reference → turn ids (identical turns are stored once)
        self.remember_ms: list[float] = []
        self.recall_ms: list[float] = []
        self.context_ms: list[float] = []

    def remember(self, turn: Turn) -> None:
        self.clock.now = turn.at
        t0 = time.perf_counter()
        result = tools.remember(self.svc, self.principal, RememberInput(content=turn.content, location=turn.location))
        self.remember_ms.append((time.perf_counter() - t0) * 1000)
        self.ids.setdefault(result.memory.reference, []).append(turn.dia_id)
        self.clock.now = max(self.clock.now, turn.at) + timedelta(days=1)  # reads happen after the last turn

    def recall(self, question: str, limit: int, timed: bool = True) -> list[list[str]]:
        t0 = time.perf_counter()
        result = tools.recall(self.svc, self.principal, RecallInput(query=question, limit=limit))
        if timed:
            self.recall_ms.append((time.perf_counter() - t0) * 1000)
        return [self.ids.get(h.reference, []) for h in result.results]

    def context(self, question: str, max_items: int, max_tokens: int, timed: bool = True) -> tuple[list[list[str]], int]:
        t0 = time.perf_counter()
        result = tools.recall_context(
            self.svc, self.principal, ContextInput(query=question, max_items=max_items, max_tokens=max_tokens)
        )
        if timed:
            self.context_ms.append((time.perf_counter() - t0) * 1000)
        return [self.ids.get(i.reference, []) for i in result.items], result.budget.used_tokens

    def close(self) -> None:
        self.store.close()
