"""The lexical leg ranked by the embedded store's formula on any cluster.

The cluster chooses the candidates (the top `lexical_k` by its own BM25, as before), and
the store then scores them with FTS5's `bm25()` (`store.fts5rank`, the one definition the
SQLite store ranks by) from statistics it reads in the same `_msearch`: how many documents
of the index hold each query term, how many documents there are and their mean length,
counted as the SQLite store's FTS5 table counts them (every document, of every holder).
Each candidate's term counts and length come from its own stored fields (`terms`,
`context`, `words`, `length`: mapping v5). So an agent gets the order the laptop gives
whatever BM25 variant the cluster runs (Lucene's, osmem's bleve), and the abstention floors
calibrated on FTS5's scores mean the same on both stores.

Index-wide statistics leak nothing: the counts never leave the store, and they change only
the order (and scores) of hits the caller may already see, exactly as Lucene's own index-wide
IDF and the SQLite store's table-wide FTS5 statistics do."""

from __future__ import annotations

from typing import Any, Sequence

from ... import text
from .. import records
from ..base import Hit
from ..fts5rank import idf, row_score
from . import queries as q

RANKED, WORDS = "terms", "words"  # the field each leg matches: tolerant, strict


def field_of(strict: bool) -> str:
    return WORDS if strict else RANKED


def kept_fields(strict: bool) -> list[str]:
    """The stored fields a candidate needs for its score (left in its `_source`)."""
    return [WORDS, "length"] if strict else [RANKED, "context", "length"]


def stats_searches(query: str, strict: bool) -> list[dict[str, Any]]:
    """Size-0 `_search` bodies over the whole index, for the same `_msearch` as the lexical
    leg: the documents and their summed `length`, then per query term (`text.query_terms`,
    as the lexical query has them) the documents whose matched field holds it. A count of
    one `term` query is what Lucene answers from the term's postings (no aggregation over
    every document); only the `sum` reads every document's `length` (one integer's doc
    values). No bodies without terms."""
    terms = text.query_terms(query, strict=strict)
    if not terms:
        return []
    field = field_of(strict)
    totals = {"size": 0, "track_total_hits": True, "query": {"match_all": {}}, "aggregations": {"length": {"sum": {"field": "length"}}}}
    return [totals, *({"size": 0, "track_total_hits": True, "query": {"term": {field: t}}} for t in terms)]


def _tokens(src: dict[str, Any], strict: bool, context_weight: float) -> tuple[list[str], list[str]]:
    """(the memory's own terms, its context's) from its stored fields. `terms` holds the
    own terms `copies` times, then the context `times` times (`records.ranked_terms`)."""
    if strict:
        return (src.get(WORDS) or "").split(), []
    ranked = (src.get(RANKED) or "").split()
    near = (src.get("context") or "").split()
    copies, times = records.ranked_copies(context_weight)
    own = ranked[: max(0, len(ranked) - times * len(near)) // copies]
    return own, near if context_weight > 0 else []


def rescored(hits: Sequence[dict[str, Any]], stats: Sequence[dict[str, Any]], query: str, strict: bool, context_weight: float) -> list[Hit]:
    """The cluster's lexical hits as `Hit`s scored by FTS5's `bm25()`, best first; equal
    scores newest first, as the SQLite store breaks ties. `stats`: the answers to
    `stats_searches`, in order."""
    terms = text.query_terms(query, strict=strict)
    totals, *holding = stats
    rows = int(totals["hits"]["total"]["value"])
    total = float(totals["aggregations"]["length"]["value"] or 0.0)
    weights = {t: idf(rows, int(answer["hits"]["total"]["value"])) for t, answer in zip(terms, holding)}
    out = []
    for h in hits:
        src = h["_source"]
        own, near = _tokens(src, strict, context_weight)
        score = row_score(weights, own, near, int(src.get("length") or 0), total / rows, context_weight) if rows and total else 0.0
        out.append(Hit(q.from_document(src), score))
    out.sort(key=lambda hit: hit.memory.created_at, reverse=True)  # stable: the cluster's order within a time
    out.sort(key=lambda hit: -hit.score)
    return out
