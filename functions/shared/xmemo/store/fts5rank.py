"""FTS5's `bm25()` as a formula, the one definition both stores rank the lexical leg by.

The SQLite store's FTS5 table ranks with it natively; its tantivy path (`textindex.Statistics`)
re-scores the candidates tantivy found with it, so a memory gets the same score, to the
last bit, whichever embedded engine chose it. The OpenSearch store does not: FTS5's IDF
and mean length are index-wide statistics, and reading them on every query would cost the
cluster in proportion to the whole index. It ranks with the cluster's own BM25 (Lucene's
on OpenSearch); lexical scores only order and are min-max scaled within a query
(`retrieval`), no floor reads them, so nothing needs recalibrating."""

from __future__ import annotations

import math
from typing import Mapping, Sequence

K1, B = 1.2, 0.75  # FTS5's bm25() constants


def idf(rows: int, n: int) -> float:
    """FTS5's IDF of a term in n of `rows` rows (never below 1e-6)."""
    value = math.log((rows - n + 0.5) / (n + 0.5)) if n < rows + 0.5 else 0.0
    return value if value > 0 else 1e-6


def row_score(
    weights: Mapping[str, float], own: Sequence[str], near: Sequence[str], length: int, avgdl: float, context_weight: float
) -> float:
    """The score FTS5's `bm25(table, 1, 1, context_weight)` gives one row for an any-term
    query (negated: higher is better): `weights` is each query term's `idf`, `own` the
    row's terms, `near` its context's (weighed by `context_weight`), `length` its tokens
    in every column and `avgdl` the table's mean of that. Nothing matches: 0."""
    norm = K1 * (1 - B + B * length / avgdl)
    score = 0.0
    for t, weight in weights.items():
        f = own.count(t) + (context_weight * near.count(t) if near else 0.0)
        if f:
            score += weight * (f * (K1 + 1.0)) / (f + norm)  # FTS5's order of operations, to the last bit
    return score
