"""Neighbouring context on OpenSearch, as the SQLite store keeps it (`records.CONTEXT_GROUP`):
a document's `context` holds the terms (`records.context_text`) of the memories just before
and just after it in its group, so the tolerant query finds a turn like "Yes, twice last
year" by the question its neighbour asked.

With no transaction to lean on, the context is rewritten after the fact: every position
that changed (a memory stored, a memory deleted) is looked up with two searches (two
memories before it, two after, one `_msearch` for a whole batch), and the memories next
to it get their context recomputed in one `_bulk` of partial updates. Two per side because
a neighbour's own context needs its other neighbour too. `rebuild` recomputes every
document's context and terms in group order (after a migration, or to repair one)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator, Sequence

from ...models import Memory
from ...retrieval.profile import PROFILE
from .. import records
from . import queries as q

WINDOW = 2  # memories fetched per side of a changed position


@dataclass(frozen=True)
class Position:
    """Where a change happened in a context group. `doc_id`, `content` and `text` (its
    search text) name the memory now at that position (a stored one), or are None (a
    deleted one)."""

    group: tuple[Any, ...]
    created_at: datetime
    reference: str
    doc_id: str | None = None
    content: str | None = None
    text: str | None = None


def stored_at(memory: Memory, doc_id: str) -> Position | None:
    group = records.context_group(memory)
    if group is None:
        return None
    return Position(group, memory.created_at, memory.reference, doc_id, memory.content, records.search_text(memory))


def deleted_at(src: dict[str, Any]) -> Position | None:
    """The position a document (its `_source`, with the group fields) leaves when deleted."""
    if not records.has_context(src.get("location", ""), src.get("bucket", "")):
        return None
    group = tuple(src.get(name) for name in records.CONTEXT_GROUP)
    created = datetime.fromisoformat(src["created_at"].replace("Z", "+00:00"))
    return Position(group, created, src["reference"])


def searches(positions: Sequence[Position]) -> list[dict[str, Any]]:
    """The `_msearch` bodies: before and after each position, in that order."""
    return [b for p in positions for b in q.neighbour_searches(p.group, p.created_at, p.reference, WINDOW)]


def ranked_fields(search_text: str, context: str, context_weight: float) -> dict[str, Any]:
    """A document's fields that follow from its search text and its context: the context,
    the ranked terms (`records.ranked_terms`), the strict words and the row length FTS5
    would count (`records.row_length`)."""
    own = records.terms_text([search_text])
    words = records.words_text([search_text])
    return {
        "context": context, "terms": records.ranked_terms(own, context, context_weight), "words": words,
        "length": records.row_length(words, own, context),
    }


def contexts(positions: Sequence[Position], answers: Sequence[dict[str, Any]], context_weight: float) -> dict[str, dict[str, Any]]:
    """Document id → its new `ranked_fields`, from `searches`' answers. Every window is
    read after all the batch's changes, so overlapping windows agree."""
    out: dict[str, dict[str, Any]] = {}

    def put(me: tuple[str, str, str], *neighbours: tuple[str, str, str] | None) -> None:
        context = records.context_text([n[1] for n in neighbours if n is not None])
        out[me[0]] = ranked_fields(me[2], context, context_weight)

    for n, pos in enumerate(positions):
        before = [_entry(h) for h in answers[2 * n]["hits"]["hits"]]
        after = [_entry(h) for h in answers[2 * n + 1]["hits"]["hits"]]
        prev, prev2 = (before + [None, None])[:2]
        nxt, nxt2 = (after + [None, None])[:2]
        centre = (pos.doc_id, pos.content or "", pos.text or "") if pos.doc_id else None
        if centre:
            put(centre, prev, nxt)
        if prev:
            put(prev, prev2, centre or nxt)
        if nxt:
            put(nxt, centre or prev, nxt2)
    return out


def _entry(hit: dict[str, Any]) -> tuple[str, str, str]:
    """(document id, content, search text) of a neighbour search's hit."""
    return hit["_id"], hit["_source"].get("content", ""), hit["_source"].get("text", "")


# -- rebuilding every context ---------------------------------------------------------------
REBUILD_FIELDS = ("holder", "location", "bucket", "temporary", "created_at", "reference", "content", "text", "embedding", "token_states")


def _in_group_order(search: Callable[[dict[str, Any]], list[dict[str, Any]]], page: int) -> Iterator[dict[str, Any]]:
    after = None
    while True:
        hits = search(q.group_order(page, REBUILD_FIELDS, after))
        yield from hits
        if len(hits) < page:
            return
        after = hits[-1]["sort"]


def _key(hit: dict[str, Any] | None) -> tuple[Any, ...] | None:
    return None if hit is None else tuple(hit["_source"].get(n) for n in records.CONTEXT_GROUP)


def with_neighbours(hits: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], str]]:
    """Each hit with its context, from a stream in group order."""
    prev: dict[str, Any] | None = None
    cur: dict[str, Any] | None = None
    for nxt in itertools.chain(hits, [None]):
        if cur is not None:
            src = cur["_source"]
            ctx = ""
            if records.has_context(src.get("location", ""), src.get("bucket", "")):
                around = [h for h in (prev, nxt) if h is not None and _key(h) == _key(cur)]
                ctx = records.context_text([h["_source"].get("content", "") for h in around])
            yield cur, ctx
        prev, cur = cur, nxt


def rebuild(
    search: Callable[[dict[str, Any]], list[dict[str, Any]]],
    bulk: Callable[[list[dict[str, Any]]], dict[str, Any]],
    index: str,
    embed: Callable[[list[str]], tuple[Sequence[Sequence[float]], Sequence[bytes | None]]] | None = None,
    page: int = 500,
    context_weight: float = PROFILE.settings.context_weight,
    re_embed: bool = False,
) -> int:
    """Recompute every document's `ranked_fields` (from its search text and the context; an
    index copied from mapping v1/v2 has none, v3 no words, v4 no length), its packed vector
    (none before v6) and, with `embed` (passage vectors and token states), the token states
    of each document with a vector but none (before v7) and, when `re_embed`, every vector
    and its states in `index`; the number of documents updated. `search` runs a `_search`
    body on `index` and returns its hits; `bulk` sends `_bulk` lines and returns the answer."""
    done = 0
    stream = with_neighbours(_in_group_order(search, page))
    while batch := list(itertools.islice(stream, page)):
        sources = [hit["_source"] for hit, _ in batch]
        need = [i for i, src in enumerate(sources) if re_embed or (src.get("embedding") and not src.get("token_states"))] if embed else []
        fresh = dict(zip(need, zip(*embed([sources[i].get("content", "") for i in need])))) if need else {}
        lines: list[dict[str, Any]] = []
        for i, (hit, ctx) in enumerate(batch):
            doc = ranked_fields(sources[i].get("text", ""), ctx, context_weight)
            if i in fresh:
                vector, states = fresh[i]
                if re_embed:
                    doc["embedding"] = [float(x) for x in vector]
                if states is not None:
                    doc["token_states"] = q.packed_states(states)
            vector = doc.get("embedding", sources[i].get("embedding"))
            if vector:  # an index copied from before v6 has no packed vector
                doc["vector_bytes"] = q.packed_vector(vector)
            lines += [{"update": {"_index": index, "_id": hit["_id"]}}, {"doc": doc}]
        failed = [item for item in bulk(lines)["items"] if item["update"].get("status", 500) >= 300]
        if failed:
            raise RuntimeError(f"rebuilding contexts in {index}: {len(failed)} updates failed ({failed[0]['update'].get('error')})")
        done += len(batch)
    return done
