"""How much of the embedded store a caller's holders own, to plan a filtered full-text search.

A ranked search that checks the caller's filter after ranking needs about k / share ranked
matches to find k the caller may see. Starting from 2 k and widening eightfold each time, a
tenant who owns 3 % of a shared store paid three or four full rankings per `recall` (`xmemo
bench load`, 32 tenants: 52 % of a worker's time in FTS5's ranking query). Knowing the share
up front sizes the first round, or sends a narrow caller straight to the filtered join, which
computes BM25 only for the rows the caller may see.

The counts are an estimate (refreshed when the store's size drifts by a tenth): they choose a
plan, never a result. Every plan returns the same memories, and the caller's filter is still
applied in SQL (`sqlite.where_clause`)."""

from __future__ import annotations

import math
import sqlite3
import threading

DRIFT = 0.1  # share of the rows the store may grow or shrink by before the counts are reread


class HolderShares:
    """Rows per holder, read with one pass over the holder index and kept until the store's
    size drifts. Thread-safe; one per store connection."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._total = 0
        self._seen_rowid = 0  # the largest rowid when the counts were read
        self._lock = threading.Lock()

    def share(self, conn: sqlite3.Connection, holders, rowid: int) -> float:
        """The holders' rows over the store's rows, 0..1 (1 for an empty store). `rowid`:
        the store's largest, which tells how far it has grown since the counts were read."""
        with self._lock:
            if not self._counts or abs(rowid - self._seen_rowid) > DRIFT * max(self._seen_rowid, 1):
                self._counts = self._count(conn)
                self._total, self._seen_rowid = sum(self._counts.values()), rowid
            if self._total <= 0:
                return 1.0
            return min(1.0, sum(self._counts.get(h, 0) for h in holders) / self._total)


    @staticmethod
    def _count(conn: sqlite3.Connection) -> dict[str, int]:
        """Rows per holder. A store with one holder (the laptop's case) is answered by two
        index seeks instead of a pass over the index (at 1M rows a tenth of a second, more
        from a cold page cache): its one holder owns everything, whatever the count."""
        # two statements: SQLite answers a lone min() or max() from the index, both at once by a scan
        lowest = conn.execute("SELECT min(holder) FROM memories").fetchone()[0]
        highest = conn.execute("SELECT max(holder) FROM memories").fetchone()[0]
        if lowest == highest:
            return {lowest: 1} if lowest is not None else {}
        return dict(conn.execute("SELECT holder, count(*) FROM memories GROUP BY holder").fetchall())


def first_round(k: int, share: float, pool: int, widest: int) -> int:
    """Ranked matches to check at first so that about `pool` × k of them are the caller's:
    `pool` × k / share, at least `pool` × k and at most `widest`."""
    if share <= 0:
        return widest
    return max(pool * k, min(widest, math.ceil(pool * k / share)))
