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
from ...embedding import Embedder, QueryTokens, embedder_has_states, passage_embeddings, query_embedding
from ...models import ContextInput, RecallInput, RememberInput
from ...services import Services
from ...store.base import MemoryStore
from ...store.sqlite import SQLiteStore
from .data import Turn


class VectorCache:
    """An embedder that embeds each distinct text once: turns are embedded in batches up
    front and the same vectors (and token states, when the embedder gives them) serve
    `remember` and the dense baseline. A question's embedding is kept only until
    `forget_query`, so each timed call that should pay for its query embedding does. With
    `path`, passages and questions persist between runs (quick experiments; latency then
    excludes query embedding and the report says so)."""

    def __init__(self, inner: Embedder, path: Path | None = None, batch: int = 32):
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.persistent = path is not None
        self._path = path / f"vectors-{inner.name}-{inner.dimension}.npz" if path is not None else None  # Titan's sizes differ
        self._batch = batch
        self._late = embedder_has_states(inner.name)  # Titan gives none: a vector alone is then complete
        self._passages: dict[str, np.ndarray] = {}
        self._states: dict[str, bytes] = {}
        self._queries: dict[str, tuple[np.ndarray, QueryTokens | None]] = {}
        self._saved_queries: dict[str, np.ndarray] = {}  # vectors saved without states: `embed_query_tokens` embeds again
        if self._path is not None and self._path.exists():
            with np.load(self._path) as saved:
                self._load_queries(saved)
                keys = saved["p_keys"].tolist()
                self._passages.update(zip(keys, saved["p_vectors"]))
                if "p_states" in saved:  # a file from before token states has none: they are embedded again
                    blob, ends = saved["p_states"].tobytes(), saved["p_state_ends"].tolist()
                    self._states.update((k, blob[a:b]) for k, a, b in zip(keys, [0, *ends[:-1]], ends) if b > a)

    def _load_queries(self, saved) -> None:
        keys = saved["q_keys"].tolist()
        if "q_token_ends" not in saved:
            self._saved_queries.update(zip(keys, saved["q_vectors"]))
            return
        ends, ids, states = saved["q_token_ends"].tolist(), saved["q_token_ids"], saved["q_token_states"]
        for key, vector, a, b in zip(keys, saved["q_vectors"], [0, *ends[:-1]], ends):
            if b > a:
                self._queries[key] = (vector, QueryTokens(ids[a:b], states[a:b]))
            else:
                self._saved_queries[key] = vector

    def _known(self, text: str) -> bool:
        return text in self._passages and (not self._late or text in self._states)

    def prime(self, texts: Sequence[str], progress=None) -> None:
        missing = list(dict.fromkeys(t for t in texts if not self._known(t)))
        for start in range(0, len(missing), self._batch):
            chunk = missing[start : start + self._batch]
            vectors, states = passage_embeddings(self.inner, chunk)
            self._passages.update(zip(chunk, vectors))
            self._states.update((t, s) for t, s in zip(chunk, states) if s is not None)
            if progress is not None:
                progress.update(len(chunk))
        if progress is not None:
            progress.update(len(texts) - len(missing))

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_passages_tokens(texts)[0]

    def embed_passages_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes | None]]:
        self.prime(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32), []
        return np.stack([self._passages[t] for t in texts]), [self._states.get(t) for t in texts]

    def embed_query(self, text: str) -> np.ndarray:
        saved = self._saved_queries.get(text)
        return saved if saved is not None else self.embed_query_tokens(text)[0]

    def embed_query_tokens(self, text: str) -> tuple[np.ndarray, QueryTokens | None]:
        if text not in self._queries:
            self._queries[text] = query_embedding(self.inner, text)
        return self._queries[text]

    def forget_query(self, text: str) -> None:
        if not self.persistent:
            self._queries.pop(text, None)
            self._saved_queries.pop(text, None)

    def save(self) -> None:
        """Passages and questions, with their states (questions' as the query cache keeps them, float16)."""
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._passages)
        states = [self._states.get(k, b"") for k in keys]
        queries = {**{k: (v, None) for k, v in self._saved_queries.items()}, **self._queries}
        tokens = [t for _, t in queries.values()]
        np.savez(
            self._path,
            p_keys=np.array(keys, dtype=str),
            p_vectors=np.stack([self._passages[k] for k in keys]) if keys else np.zeros((0, self.dimension), np.float32),
            p_states=np.frombuffer(b"".join(states), dtype=np.uint8),
            p_state_ends=np.cumsum([len(x) for x in states], dtype=np.int64),
            q_keys=np.array(list(queries), dtype=str),
            q_vectors=np.stack([v for v, _ in queries.values()]) if queries else np.zeros((0, self.dimension), np.float32),
            q_token_ids=np.concatenate([t.ids for t in tokens if t is not None] or [np.zeros(0, np.int64)]),
            q_token_states=np.concatenate([t.states.astype(np.float16) for t in tokens if t is not None] or [np.zeros((0, self.dimension), np.float16)]),
            q_token_ends=np.cumsum([0 if t is None else len(t.ids) for t in tokens], dtype=np.int64),
        )


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
