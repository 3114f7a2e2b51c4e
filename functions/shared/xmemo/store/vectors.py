"""The embedded store's vector index: a cache of the `embedding` column, rebuilt from the
table, never the source of truth.

Up to `exact_rows` vectors it keeps them as a float32 matrix and scores them exactly (a
few milliseconds). Past that it keeps one sign bit per dimension of each vector minus
the corpus mean (48 bytes for 384 dimensions) and an int8 copy of that difference with
one float32 scale per row (388 bytes): the `RESCORED` rows nearest in Hamming distance are
rescored from the int8 copy, and the store computes the final cosines from the stored
float32 vectors of the few it returns. The caller's visibility is applied here as a holder mask before any
candidate is chosen, and again in SQL, so pruning changes recall, never who sees what.

The pruned form is also kept in one file beside the store (`Saved`), rewritten as the
store grows, and memory-mapped when a process opens the store: reading every embedding
from the table took 3.7 s at 100k memories and 18 s at 1M before the first query could
be answered, and left the table's pages in the process's memory. The file is a cache
like the rest: rows past its last rowid are read from the table, rows the table no longer
holds are dropped by SQL (and the sample check below), and a file of another form, or
one that holds rowids past the table's last, is ignored or cut back."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..embedding import cores
from ..errors import InvalidRequest

EXACT_ROWS = 20_000
RESCORED = 5_000  # rows nearest by sign bits whose int8 cosines are computed (4,000 with float16)
SAMPLE = 1_000  # indexed rows looked up to tell whether many were deleted
RECOUNT_SECONDS = 60.0  # at most this long between two such looks while the store changes
RESCORE_BLOCK = 256  # rows of the int8 copy converted to float32 at once (384 KiB of scratch)
BLOCK = 65_536  # rows whose bits are compared at once (scratch of 512 KiB a word: stays in cache)
PARALLEL_ROWS = 200_000  # from this many rows the Hamming pass is split among the cores
BYTE_WORDS = 3  # words whose bit counts are summed in one byte (3 × 64 = 192 ≤ 255) before widening to uint16
CUT_STRIDE = 17  # the cut of the nearest rows is guessed from every 17th distance (prime: a store grown from
# copies of a round-sized corpus is not sampled at the same memory in every copy, which widened the guess's spread) …
CUT_MARGIN = 2.0  # … aiming at twice the rows wanted (a short guess costs one more pass, never a result)
_FAR = np.iinfo(np.uint16).max  # the distance of a row the caller may not see
SAVE_SHARE = 0.1  # the file is rewritten once the rows read from the table since it reach this share of it
SAVE_ROWS = 20_000  # … and at least this many
_MAGIC = b"XMVI"
_SAVED_FORMAT = 1


class _Column:
    """A 1-D or 2-D array that grows at its end in amortised O(1) (capacity doubles), so a
    write does not copy the whole index."""

    def __init__(self, dtype, width: int | None = None):
        self._data = np.zeros((0,) if width is None else (0, width), dtype=dtype)
        self.size = 0

    @classmethod
    def over(cls, data: np.ndarray, size: int) -> "_Column":
        """A column of the first `size` rows of `data`, the rest its spare capacity (a
        private memory map: rows appended there stay in this process; growth past it
        copies into memory, as any growth past capacity does)."""
        column = cls(data.dtype, data.shape[1] if data.ndim == 2 else None)
        column._data, column.size = data, size
        return column

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

    def __init__(self, exact_rows: int = EXACT_ROWS, path: Path | None = None) -> None:
        self.exact_rows = exact_rows
        self.path = path  # the saved form's file (None: never saved)
        self.version = -1
        self.max_rowid = 0
        self.codes: dict[str, int] = {}
        self.rowids = _Column(np.int64)
        self.holders = _Column(np.int32)
        self.matrix: _Column | None = None  # exact mode
        self.bits: list[_Column] | None = None  # pruned mode: one column per 64 dimensions
        self.small: _Column | None = None  # pruned mode: each vector minus the mean, as int8
        self.scale: _Column | None = None  # pruned mode: what one int8 step is worth, per row
        self.mean: np.ndarray | None = None
        self._counted = -(10**9)  # the version at which deletions were last looked for
        self._counted_at = 0.0
        self._distance = np.zeros(0, dtype=np.uint16)  # reused by every query (the store's lock serialises them)
        self._rescoring: tuple[np.ndarray, np.ndarray] | None = None  # int8 and float32 scratch of `_int8_dots`
        self._saved_rows = 0  # rows the saved file holds (or held when this index was made from it)
        self._opened = False  # whether the saved file was looked for

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
        if not self._opened:
            self._opened = True
            self._load(conn)
        # Deleted rows stay in the index until a rebuild (SQL drops them from every answer).
        # Counting the live rows would scan the table (1-2.6 s at 1M), so a sample of the
        # indexed rows is looked up by rowid instead, now and then.
        if version - self._counted >= 1000 or time.monotonic() - self._counted_at > RECOUNT_SECONDS:
            self._counted, self._counted_at = version, time.monotonic()
            if self._mostly_deleted(conn):  # rebuild instead of carrying stale rows
                self.__init__(self.exact_rows, self.path)
                self._opened = True
                self._counted, self._counted_at = version, time.monotonic()
        cursor = conn.execute(
            "SELECT rowid, holder, embedding FROM memories WHERE rowid > ? AND embedding IS NOT NULL ORDER BY rowid",
            (self.max_rowid,),
        )
        while rows := cursor.fetchmany(50_000):
            self._append(rows)
        self.version = version
        if self.path is not None and not self.exact and self.rowids.size - self._saved_rows >= max(SAVE_ROWS, SAVE_SHARE * self._saved_rows):
            self._save(conn)

    # -- the saved form ----------------------------------------------------------------------
    def _arrays(self) -> dict[str, np.ndarray]:
        """What the saved file holds, by name (pruned mode only)."""
        out = {"rowids": self.rowids.view, "holders": self.holders.view, "small": self.small.view, "scale": self.scale.view, "mean": self.mean}  # type: ignore[union-attr]
        out.update({f"bits{w}": c.view for w, c in enumerate(self.bits)})  # type: ignore[arg-type]
        return out

    def _save(self, conn: sqlite3.Connection) -> None:
        """Write the pruned index to `path` (a new file renamed over the old: a process that
        maps the old one keeps reading it), with the reference of its last row. A failed
        write leaves no file and no error: the next process reads the table instead."""
        last = conn.execute("SELECT reference FROM memories WHERE rowid = ?", (self.max_rowid,)).fetchone()
        header: dict = {
            "format": _SAVED_FORMAT, "rows": self.rowids.size, "max_rowid": self.max_rowid, "last_reference": last[0] if last else None,
            "codes": self.codes, "sections": {},
        }
        at = 0
        spare = max(SAVE_ROWS, self.rowids.size // 4)  # rows the next processes append without copying the rest
        for name, a in self._arrays().items():
            shape = [a.shape[0] + (spare if name != "mean" else 0), *a.shape[1:]]
            header["sections"][name] = [at, a.dtype.str, shape]
            at += -(-int(np.prod(shape)) * a.itemsize // 64) * 64
        head = json.dumps(header).encode()
        start = -(-(len(_MAGIC) + 4 + len(head)) // 64) * 64
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")  # type: ignore[union-attr]
        try:
            with open(tmp, "wb") as f:
                f.write(_MAGIC + len(head).to_bytes(4, "little") + head)
                for name, a in self._arrays().items():
                    f.seek(start + header["sections"][name][0])
                    f.write(np.ascontiguousarray(a).tobytes())
                f.truncate(start + at)
            os.replace(tmp, self.path)  # type: ignore[arg-type]
            self._saved_rows = self.rowids.size
        except OSError:
            tmp.unlink(missing_ok=True)

    def _load(self, conn: sqlite3.Connection) -> None:
        """Take the pruned index from the saved file, memory-mapped, if there is one of this
        form whose last row is still in the table under the same reference. Otherwise the
        file is ignored (and rewritten once the table is read): SQLite hands a deleted last
        rowid to the next row written, so a file whose last row was deleted may hold a
        vector under a rowid that is now another memory's, and a file beside another
        store's table holds none of its rows."""
        if self.path is None or not self.path.exists():
            return
        try:
            with open(self.path, "rb") as f:
                if f.read(4) != _MAGIC:
                    return
                size = int.from_bytes(f.read(4), "little")
                header = json.loads(f.read(size))
            if header.get("format") != _SAVED_FORMAT:
                return
            start = -(-(len(_MAGIC) + 4 + size) // 64) * 64
            arrays = {  # copy-on-write: appended rows never reach the file, which other processes map
                name: np.memmap(self.path, dtype=np.dtype(dtype), mode="c", offset=start + at, shape=tuple(shape))
                for name, (at, dtype, shape) in header["sections"].items()
            }
            last = conn.execute("SELECT reference FROM memories WHERE rowid = ?", (int(header["max_rowid"]),)).fetchone()
            rows = int(header["rows"])
            if last is None or last[0] != header["last_reference"] or not 0 < rows <= len(arrays["rowids"]):
                return
            words = sum(1 for name in arrays if name.startswith("bits"))
            self.codes = {str(k): int(v) for k, v in header["codes"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return
        self.mean = np.asarray(arrays["mean"])
        self.rowids, self.holders = _Column.over(arrays["rowids"], rows), _Column.over(arrays["holders"], rows)
        self.small, self.scale = _Column.over(arrays["small"], rows), _Column.over(arrays["scale"], rows)
        self.bits = [_Column.over(arrays[f"bits{w}"], rows) for w in range(words)]
        self.matrix = None
        self.max_rowid = int(header["max_rowid"])
        self._saved_rows = self.rowids.size

    def _mostly_deleted(self, conn: sqlite3.Connection) -> bool:
        """Whether more than a tenth of an evenly spaced sample of the indexed rows is gone
        (deleted, or its embedding cleared): `SAMPLE` rowid lookups, not a table scan."""
        if self.rowids.size == 0:
            return False
        pick = np.unique(np.linspace(0, self.rowids.size - 1, min(SAMPLE, self.rowids.size)).astype(np.int64))
        rowids = self.rowids.view[pick].tolist()
        live = conn.execute(
            f"SELECT count(*) FROM memories WHERE embedding IS NOT NULL AND rowid IN ({','.join('?' * len(rowids))})", rowids
        ).fetchone()[0]
        return live < 0.9 * len(rowids)

    def _append(self, rows: list) -> None:
        vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        if self.matrix is None and self.bits is None:
            self.matrix = _Column(np.float32, vectors.shape[1])
        width = (self.matrix if self.matrix is not None else self.small).view.shape[1]  # type: ignore[union-attr]
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
        every row) and keep only the signs and the int8 rescoring copy."""
        matrix = self.matrix.view  # type: ignore[union-attr]
        self.mean = matrix.mean(axis=0).astype(np.float32)
        words = -(-matrix.shape[1] // 64)
        self.bits = [_Column(np.uint64) for _ in range(words)]
        self.small = _Column(np.int8, matrix.shape[1])
        self.scale = _Column(np.float32)
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
        """Append sign bits and the int8 copy: each row minus the mean, scaled so its largest
        component is 127: half float16's memory and a faster conversion, and it chose the
        same candidates in an ad-hoc comparison (docs/embedded-store-scale.md)."""
        centred = vectors - self.mean
        scale = np.maximum(np.abs(centred).max(axis=1), 1e-12) / 127.0
        self.small.extend(np.rint(centred / scale[:, None]).astype(np.int8))  # type: ignore[union-attr]
        self.scale.extend(scale.astype(np.float32))  # type: ignore[union-attr]
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
        whether those are exact (in pruned mode they are int8 approximations for the rows
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
        # (row - mean) . query from the int8 copy, plus mean . query: about the cosine
        centred = self._int8_dots(pool, vector) * self.scale.view[pool]  # type: ignore[union-attr]
        scores = centred + float(self.mean @ vector)  # type: ignore[operator]
        top = np.argsort(-scores, kind="stable")[:limit]
        return self.rowids.view[pool[top]], scores[top], False

    def _int8_dots(self, pool: np.ndarray, vector: np.ndarray) -> np.ndarray:
        """`small[pool] @ vector` in float32, `RESCORE_BLOCK` rows at a time through scratch
        kept across queries: converting all 5,000 rows at once allocated ~8 MB of fresh
        pages per query (about 1 ms of a 4.5 ms semantic leg at 100k memories, measured
        with both forms alternating in one process)."""
        small = self.small.view  # type: ignore[union-attr]
        if self._rescoring is None or self._rescoring[0].shape[1] != small.shape[1]:
            self._rescoring = (np.empty((RESCORE_BLOCK, small.shape[1]), np.int8), np.empty((RESCORE_BLOCK, small.shape[1]), np.float32))
        rows, floats = self._rescoring
        out = np.empty(len(pool), dtype=np.float32)
        for a in range(0, len(pool), RESCORE_BLOCK):
            b = min(a + RESCORE_BLOCK, len(pool))
            np.take(small, pool[a:b], axis=0, out=rows[: b - a])
            np.copyto(floats[: b - a], rows[: b - a])
            np.dot(floats[: b - a], vector, out=out[a:b])
        return out

    def _hamming(self, vector: np.ndarray) -> np.ndarray:
        """Hamming distance of every row's bits to the query's (uint16, a buffer reused by
        the next query). Rows are taken a block at a time, each word's column streamed
        through a cache-sized scratch; past `PARALLEL_ROWS` the blocks are shared among
        the cores (numpy releases the GIL), which divides the leg's largest cost."""
        query = self._signs(vector.reshape(1, -1))[0]
        n = self.rowids.size
        if len(self._distance) < n:  # kept across queries: fresh pages cost page faults
            self._distance = np.empty(max(n, 2 * len(self._distance)), dtype=np.uint16)
        out = self._distance[:n]
        columns = [c.view for c in self.bits]  # type: ignore[union-attr]
        starts = range(0, n, BLOCK)
        workers = min(cores(), len(starts)) if n >= PARALLEL_ROWS else 1
        if workers == 1:
            _hamming_blocks(columns, query, out, starts)
        else:
            share = -(-len(starts) // workers)
            parts = [starts[i : i + share] for i in range(0, len(starts), share)]
            list(_pool(workers).map(lambda part: _hamming_blocks(columns, query, out, part), parts))
        return out


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    """One thread pool per size, kept for the process (starting threads per query costs);
    keyed by process id too, since a forked child has none of its parent's threads."""
    key = (os.getpid(), workers)
    with _POOLS_LOCK:
        if key not in _POOLS:
            _POOLS[key] = ThreadPoolExecutor(workers, thread_name_prefix="xmemo-hamming")
        return _POOLS[key]


def _hamming_blocks(columns: list[np.ndarray], query: np.ndarray, out: np.ndarray, starts) -> None:
    """`out[rows] = popcount(bits ^ query)` for the blocks of rows beginning at `starts`.
    The counts of `BYTE_WORDS` words are summed in a byte and widened to the uint16
    distances once per group: adding each word's byte counts into the distances cast
    them on every word (six casting passes and a zeroing per block at 384 dimensions,
    two now; CPU 7.2 -> 6.8 ms at 1M rows, bench-out/latency/synthetic-1m-semantic/)."""
    scratch = np.empty(BLOCK, dtype=np.uint64)
    count = np.empty(BLOCK, dtype=np.uint8)
    group = np.empty(BLOCK, dtype=np.uint8)
    for a in starts:
        b = min(a + BLOCK, len(out))
        m, into = b - a, out[a:b]
        for first in range(0, len(columns), BYTE_WORDS):
            for w in range(first, min(first + BYTE_WORDS, len(columns))):
                np.bitwise_xor(columns[w][a:b], query[w], out=scratch[:m])
                if w == first:
                    np.bitwise_count(scratch[:m], out=group[:m])
                else:
                    np.bitwise_count(scratch[:m], out=count[:m])
                    np.add(group[:m], count[:m], out=group[:m])
            if first == 0:
                np.copyto(into, group[:m])
            else:
                np.add(into, group[:m], out=into)


def _within_cut(values: np.ndarray, limit: int) -> np.ndarray:
    """Indices, ascending, of the rows whose distance is at most the `limit`-th smallest
    (`values` uint16, `limit` below their number). A histogram of every distance found
    that cut before, and at a million rows it cost more than the comparison (bincount
    copies the distances to int64 first: 8 MB): 1.8 ms of CPU a query, 0.8 now
    (bench-out/latency/synthetic-1m-semantic/). Now the cut is guessed from a strided sample
    a little past it; the rows within the guess are a superset of the rows within the
    cut (their count is at least `limit`), so the cut is read from their histogram and
    the answer is the same rows in the same order. A short or failed guess falls back
    to the whole histogram."""
    n = len(values)
    if n >= CUT_STRIDE * limit:
        sample = values[::CUT_STRIDE]
        rank = int(limit * CUT_MARGIN / CUT_STRIDE) + 8
        guess = int(np.searchsorted(np.cumsum(np.bincount(sample)), rank))
        if guess < _FAR:
            idx = np.flatnonzero(values <= guess)
            if len(idx) >= limit:
                near = values[idx]
                cut = int(np.searchsorted(np.cumsum(np.bincount(near)), limit))
                return idx if cut >= guess else idx[near <= cut]
    cut = int(np.searchsorted(np.cumsum(np.bincount(values)), limit))
    return np.flatnonzero(values <= cut)


def _smallest(values: np.ndarray, limit: int, visible: int) -> np.ndarray:
    """Indices of the `limit` smallest of `values` (only the first `visible` of the sorted
    order are real rows), smallest first."""
    limit = min(limit, visible)
    if limit <= 0:
        return np.zeros(0, dtype=np.int64)
    if values.dtype == np.uint16 and limit < len(values):  # distances: a histogram finds the cut
        idx = _within_cut(values, limit)
        if len(idx) > limit:
            idx = idx[np.argpartition(values[idx], limit - 1)[:limit]]
        return idx[np.argsort(values[idx], kind="stable")]
    if limit < len(values):
        idx = np.argpartition(values, limit - 1)[:limit]
    else:
        idx = np.arange(len(values))
    return idx[np.argsort(values[idx], kind="stable")]
