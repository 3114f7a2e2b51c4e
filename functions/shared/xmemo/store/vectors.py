"""The embedded store's vector index: a cache of the `embedding` column, rebuilt from the
table, never the source of truth.

Up to `exact_rows` vectors it keeps them as a float32 matrix and scores them exactly (a
few milliseconds). Past that it keeps one sign bit per dimension of each vector minus
the corpus mean (48 bytes for 384 dimensions) and a float16 copy (768 bytes): the
`RESCORED` rows nearest in Hamming distance are rescored from the float16 copy, and the
store computes the final cosines from the stored float32 vectors of the few it returns. The caller's visibility is applied here as a holder mask before any
candidate is chosen, and again in SQL, so pruning changes recall, never who sees what."""

from __future__ import annotations

import sqlite3
import time

import numpy as np

from ..errors import InvalidRequest

EXACT_ROWS = 20_000
RESCORED = 4_000  # rows nearest by sign bits whose float16 cosines are computed
_FAR = np.iinfo(np.uint16).max  # the distance of a row the caller may not see


class _Column:
    """A 1-D or 2-D array that grows at its end in amortised O(1) (capacity doubles), so a
    write does not copy the whole index."""

    def __init__(self, dtype, width: int | None = None):
        self._data = np.zeros((0,) if width is None else (0, width), dtype=dtype)
        self.size = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.size + len(values)
        if need > len(self._data):
            grown = np.zeros((max(need, 2 * len(self._data), 1024), *self._data.shape[1:]), dtype=self._data.dtype)
            grown[: self.size] = self._data[: self.size]
            self._data = grown
        self._data[self.size : need] = values
        self.size = need

    @property
    def view(self) -> np.ndarray:
        return self._data[: self.size]


class VectorIndex:
    """Every stored embedding (exact or as sign bits), its rowid, and its holder's code."""

    def __init__(self, exact_rows: int = EXACT_ROWS) -> None:
        self.exact_rows = exact_rows
        self.version = -1
        self.max_rowid = 0
        self.codes: dict[str, int] = {}
        self.rowids = _Column(np.int64)
        self.holders = _Column(np.int32)
        self.matrix: _Column | None = None  # exact mode
        self.bits: list[_Column] | None = None  # pruned mode: one column per 64 dimensions
        self.half: _Column | None = None  # pruned mode: the vectors as float16
        self.mean: np.ndarray | None = None
        self._counted = -(10**9)  # the version at which live rows were last counted
        self._counted_at = 0.0

    @property
    def exact(self) -> bool:
        return self.bits is None

    def _code(self, holder: str) -> int:
        return self.codes.setdefault(holder, len(self.codes))

    def refresh(self, conn: sqlite3.Connection) -> None:
        """Catch up with the table: new rows appended; after many deletions, rebuilt."""
        version = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()[0]
        if version == self.version:
            return
        # Deleted rows stay in the index until a rebuild (SQL drops them from every answer);
        # counting the live rows scans the table (~0.1 s at 1M), so only now and then.
        if version - self._counted >= 1000 or time.monotonic() - self._counted_at > 60:
            self._counted, self._counted_at = version, time.monotonic()
            live = conn.execute("SELECT count(*) FROM memories WHERE embedding IS NOT NULL").fetchone()[0]
            if live < 0.9 * self.rowids.size:  # many deletions: rebuild instead of carrying stale rows
                self.__init__(self.exact_rows)
                self._counted, self._counted_at = version, time.monotonic()
        cursor = conn.execute(
            "SELECT rowid, holder, embedding FROM memories WHERE rowid > ? AND embedding IS NOT NULL ORDER BY rowid",
            (self.max_rowid,),
        )
        while rows := cursor.fetchmany(50_000):
            self._append(rows)
        self.version = version

    def _append(self, rows: list) -> None:
        vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        if self.matrix is None and self.bits is None:
            self.matrix = _Column(np.float32, vectors.shape[1])
        width = (self.matrix if self.matrix is not None else self.half).view.shape[1]  # type: ignore[union-attr]
        if vectors.shape[1] != width:
            raise InvalidRequest("stored embeddings have another dimension than the configured embedder")
        self.rowids.extend(np.array([r[0] for r in rows], dtype=np.int64))
        self.holders.extend(np.array([self._code(r[1]) for r in rows], dtype=np.int32))
        self.max_rowid = int(self.rowids.view[-1])
        if self.matrix is not None:
            self.matrix.extend(vectors)
            if self.matrix.size > self.exact_rows:
                self._to_bits()
        else:
            self._extend_bits(vectors)

    def _to_bits(self) -> None:
        """Leave exact mode: centre on the mean of the vectors so far (e5's vectors share a
        large common component; without centring most sign bits would be the same for
        every row) and keep only the signs."""
        matrix = self.matrix.view  # type: ignore[union-attr]
        self.mean = matrix.mean(axis=0).astype(np.float32)
        words = -(-matrix.shape[1] // 64)
        self.bits = [_Column(np.uint64) for _ in range(words)]
        self.half = _Column(np.float16, matrix.shape[1])
        for start in range(0, len(matrix), 50_000):
            self._extend_bits(matrix[start : start + 50_000])
        self.matrix = None

    def _signs(self, vectors: np.ndarray) -> np.ndarray:
        """(n, words) uint64: bit j set where dimension j is above the mean."""
        packed = np.packbits(vectors - self.mean > 0, axis=1)
        pad = (-packed.shape[1]) % 8
        if pad:
            packed = np.pad(packed, ((0, 0), (0, pad)))
        return np.ascontiguousarray(packed).view(np.uint64)

    def _extend_bits(self, vectors: np.ndarray) -> None:
        self.half.extend(vectors.astype(np.float16))  # type: ignore[union-attr]
        signs = self._signs(vectors)
        for w, column in enumerate(self.bits):  # type: ignore[arg-type]
            column.extend(signs[:, w])

    def _mask(self, holders: frozenset[str]) -> np.ndarray | None:
        """Rows of the caller's holders (None: every row), or an empty array for none."""
        allowed = [self.codes[h] for h in holders if h in self.codes]
        if not allowed:
            return np.zeros(0, dtype=bool)
        if len(allowed) == len(self.codes):
            return None
        codes = self.holders.view
        if len(allowed) == 1:
            return codes == allowed[0]
        return np.isin(codes, np.array(allowed, dtype=np.int32))

    def nearest(self, vector: np.ndarray, holders: frozenset[str], limit: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """Up to `limit` rowids among `holders`' rows, nearest first, their cosines, and
        whether those are exact (in pruned mode they are float16 cosines of the rows
        nearest by sign bits: the caller recomputes the ones it keeps)."""
        empty = np.zeros(0, dtype=np.int64)
        if self.rowids.size == 0 or limit <= 0:
            return empty, np.zeros(0, np.float32), True
        mask = self._mask(holders)
        if mask is not None and not mask.any():
            return empty, np.zeros(0, np.float32), True
        visible = int(mask.sum()) if mask is not None else self.rowids.size
        if self.matrix is not None:
            scores = self.matrix.view @ vector
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
            top = _smallest(-scores, limit, visible)
            return self.rowids.view[top], scores[top], True
        distance = self._hamming(vector)
        if mask is not None:
            distance[~mask] = _FAR
        pool = _smallest(distance, max(limit, RESCORED), visible)
        scores = self.half.view[pool].astype(np.float32) @ vector  # type: ignore[union-attr]
        top = np.argsort(-scores, kind="stable")[:limit]
        return self.rowids.view[pool[top]], scores[top], False

    def _hamming(self, vector: np.ndarray) -> np.ndarray:
        """Hamming distance of every row's bits to the query's, one 64-bit word at a time
        (each pass streams one contiguous column: 8 bytes a row)."""
        query = self._signs(vector.reshape(1, -1))[0]
        out = np.zeros(self.rowids.size, dtype=np.uint16)
        scratch = np.empty(self.rowids.size, dtype=np.uint64)
        for w, column in enumerate(self.bits):  # type: ignore[arg-type]
            np.bitwise_xor(column.view, query[w], out=scratch)
            out += np.bitwise_count(scratch)
        return out


def _smallest(values: np.ndarray, limit: int, visible: int) -> np.ndarray:
    """Indices of the `limit` smallest of `values` (only the first `visible` of the sorted
    order are real rows), smallest first."""
    limit = min(limit, visible)
    if limit <= 0:
        return np.zeros(0, dtype=np.int64)
    if values.dtype == np.uint16 and limit < len(values):  # distances: a histogram finds the cut
        cut = int(np.searchsorted(np.cumsum(np.bincount(values)), limit))
        idx = np.flatnonzero(values <= cut)
        if len(idx) > limit:
            idx = idx[np.argpartition(values[idx], limit - 1)[:limit]]
        return idx[np.argsort(values[idx], kind="stable")]
    if limit < len(values):
        idx = np.argpartition(values, limit - 1)[:limit]
    else:
        idx = np.arange(len(values))
    return idx[np.argsort(values[idx], kind="stable")]
