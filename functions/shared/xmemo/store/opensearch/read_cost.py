"""What in a read-path request body makes its cost grow with the whole index.

A multi-tenant cluster serves a recall at a billion memories only if each search it sends
touches what the caller's filter and the engine's top-k bound: no aggregation (a `sum`
over every document), no exact total-hit count (`track_total_hits: true` counts every
match), no size-0 search (a count by search, e.g. one per query term) and no scoring query
without the visibility filter (which would rank every tenant's documents). The store's
read path sends none of these; `tests/opensearch/test_read_cost.py` checks every body it
sends, and `xmemo bench store` reports what each body may touch."""

from __future__ import annotations

from typing import Any, Iterable


def _has_holder_filter(node: Any) -> bool:
    """Whether a `terms: {holder: ...}` clause (the visibility filter's first) is in `node`."""
    if isinstance(node, dict):
        if "terms" in node and isinstance(node["terms"], dict) and "holder" in node["terms"]:
            return True
        return any(_has_holder_filter(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_holder_filter(v) for v in node)
    return False


def index_wide(body: dict[str, Any]) -> list[str]:
    """The reasons `body` (one `_search` body) costs in proportion to the index; empty when
    it is bounded by the caller's documents and its `size`."""
    out = []
    for key in ("aggs", "aggregations"):
        if key in body:
            out.append(f"an aggregation ({key}: {sorted(body[key])})")
    tracked = body.get("track_total_hits")
    if tracked is True or (isinstance(tracked, int) and not isinstance(tracked, bool) and tracked > 10_000):
        out.append(f"an exact total-hit count (track_total_hits: {tracked!r})")
    if body.get("size", 10) == 0:
        out.append("a size-0 search (a count, not a read)")
    if not _has_holder_filter(body.get("query")):
        out.append("a query without the visibility filter (every tenant's documents)")
    return out


def searches_of(msearch_lines: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bodies of an `_msearch` request (its header/body pairs)."""
    lines = list(msearch_lines)
    return lines[1::2]
