"""Pure builders of every OpenSearch request body the store sends, and the conversions
between a `Memory` and its document. Nothing here does I/O, so each body is unit-tested
as a dict against OpenSearch's documented shapes. The rules both stores share (record
fields, duplicate key, search text, cursors) are `store.records`'.

`visibility_filter` is to OpenSearch what `store.sqlite.where_clause` is to SQL: the one
translation of a `ReadFilter` (built only by `auth.read_filter`) into `bool.filter`
clauses, used by every read, by `delete_by_query` and inside the k-NN clause."""

from __future__ import annotations

import base64
import hashlib
import re
import sys
import unicodedata
from array import array
from datetime import datetime, timezone
from typing import Any, Sequence

from ... import text
from ...auth import ReadFilter
from ...models import Memory
from ...retrieval.profile import PROFILE
from .. import records

# Fields a caller gets back; the embedding and the derived search texts stay in the index.
SOURCE_EXCLUDES = ["embedding", "vector_bytes", "token_states", "text", "terms", "words", "context", "length"]
# What a tolerant candidate carries: what fusion, the group boost and the late leg read of
# it (the reference, recency, the context group's holder, location, bucket, temporariness).
# The record itself (content, title, tags, source...) is fetched only for what is returned
# (`records_search`), so a recall's bytes follow what it returns, not its candidate pool.
CANDIDATE_FIELDS = ["reference", "created_at", "owner", "team", "location", "bucket", "temporary"]
# What the store reads of a search's answer (the `filter_path` URL parameter): each hit's
# score and source, and a failed search's error. The rest (`_index`, `_id`, `sort`, `_shards`,
# `took`, totals) is about as long as a candidate's source and read by nobody.
MSEARCH_FILTER = "responses.hits.hits._score,responses.hits.hits._source,responses.error,responses.status"
SEARCH_FILTER = "hits.hits._source"


def hits_of(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The hits of one search's answer (a `filter_path` answer has no `hits` when none matched)."""
    return answer.get("hits", {}).get("hits", [])


# -- documents ---------------------------------------------------------------------------
def iso(value: datetime | None) -> str | None:
    """UTC ISO 8601 with microseconds (OpenSearch `date` keeps milliseconds for sorting
    and ranges; `_source` keeps the exact value)."""
    return None if value is None else value.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


# A document keeps times as ISO strings, tags as a list and the source as an object.
DOCUMENT = records.Codec(
    put={records.TIME: iso, records.LIST: list, records.OBJECT: lambda source: source.model_dump()},
    take={records.LIST: tuple, records.FLAG: bool},
)


def to_document(memory: Memory, context_weight: float = PROFILE.settings.context_weight) -> dict[str, Any]:
    """The record's fields, the search text, its ranked terms (no neighbours yet: the
    context rewrite adds theirs) and the vector; None values are left out."""
    doc = records.to_record(memory, DOCUMENT)
    doc["text"] = records.search_text(memory)
    own = records.terms_text([doc["text"]])
    doc["terms"] = records.ranked_terms(own, "", context_weight)
    doc["words"] = records.words_text([doc["text"]])
    doc["length"] = records.row_length(doc["words"], own, "")
    if memory.embedding is not None:
        doc["embedding"] = [float(x) for x in memory.embedding]
        doc["vector_bytes"] = packed_vector(memory.embedding)
    if memory.token_states is not None:
        doc["token_states"] = packed_states(memory.token_states)
    return {k: v for k, v in doc.items() if v is not None}


def packed_vector(vector: Sequence[float]) -> str:
    """The vector as base64 of little-endian float32 (mapping v6's `vector_bytes`): what the
    semantic leg's hits bring back for the hub discount, about 4× shorter than the
    `embedding` array as JSON and decoded in one call instead of number by number."""
    values = array("f", (float(x) for x in vector))
    if sys.byteorder != "little":
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode("ascii")


def packed_states(data: bytes) -> str:
    """Token states (`late.TokenStates.to_bytes()`) as mapping v7's `token_states` (base64)."""
    return base64.b64encode(data).decode("ascii")


def unpacked_vector(packed: str | None) -> array | None:
    """`packed_vector`'s inverse; None for a document written before mapping v6."""
    if not packed:
        return None
    values = array("f")
    values.frombytes(base64.b64decode(packed))
    if sys.byteorder != "little":
        values.byteswap()
    return values


def from_document(src: dict[str, Any]) -> Memory:
    return records.from_record(src, DOCUMENT)


def candidate_from_document(src: dict[str, Any]) -> Memory:
    """A partial memory from a candidate's `CANDIDATE_FIELDS` (not validated: the content
    and the rest are empty until `records_search` brings the whole record; see
    `Candidates.partial`)."""
    created = datetime.fromisoformat(src["created_at"].replace("Z", "+00:00"))
    return Memory.model_construct(
        reference=src["reference"], type="note", content="", location=src["location"], bucket=src["bucket"],
        owner=src["owner"], team=src.get("team"), boundary="", created_at=created, updated_at=created,
        temporary=bool(src.get("temporary", False)), content_sha256="",
    )


def slot_id(memory: Memory) -> str:
    """Deterministic `_id` of a memory: one slot per duplicate key (`records.DUPLICATE_KEY`).
    A retried write lands on the same slot, so `op_type=create` turns a duplicate into a
    409 instead of a second document."""
    key = "\x1f".join(("t" if v else "p") if isinstance(v, bool) else v for v in records.duplicate_key(memory))
    return "s_" + hashlib.sha256(key.encode()).hexdigest()[:40]


def retired_id(reference: str) -> str:
    """`_id` of a superseded memory moved out of its slot (see `OpenSearchStore.insert`)."""
    return "r_" + reference


# -- the visibility filter -----------------------------------------------------------------
def visibility_filter(rf: ReadFilter) -> list[dict[str, Any]]:
    """`bool.filter` clauses for a ReadFilter: holders, liveness, temporariness and the
    request's exact filters (tags all-of, created_after inclusive, created_before exclusive)."""
    holders = sorted(rf.holders)
    if not holders:
        return [{"bool": {"must_not": [{"match_all": {}}]}}]  # nothing is visible
    clauses: list[dict[str, Any]] = [{"terms": {"holder": holders}}]
    if rf.live_only:
        clauses.append({"bool": {"must_not": [{"exists": {"field": "superseded_by"}}]}})
        clauses.append(
            {
                "bool": {
                    "should": [
                        {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}},
                        {"range": {"expires_at": {"gt": iso(rf.now)}}},
                    ],
                    "minimum_should_match": 1,
                }
            }
        )
    if not rf.include_temporary:
        clauses.append({"term": {"temporary": False}})
    for field in ("bucket", "type", "project"):
        value = getattr(rf, field)
        if value is not None:
            clauses.append({"term": {field: value}})
    for tag in rf.tags:
        clauses.append({"term": {"tags": tag}})
    if rf.created_after is not None or rf.created_before is not None:
        bounds: dict[str, str] = {}
        if rf.created_after is not None:
            bounds["gte"] = iso(rf.created_after)  # type: ignore[assignment]
        if rf.created_before is not None:
            bounds["lt"] = iso(rf.created_before)  # type: ignore[assignment]
        clauses.append({"range": {"created_at": bounds}})
    return clauses


# -- lexical queries -------------------------------------------------------------------------
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def split_scripts(query: str) -> tuple[list[str], list[str]]:
    """(Latin-script words as typed, CJK runs) of a query. CJK runs are matched on the
    bigram subfield, other words on the word/stem fields; both as the SQLite store splits."""
    normal = unicodedata.normalize("NFKC", query)
    cjk = text.CJK_RUN.findall(normal)
    rest = text.CJK_RUN.sub(" ", normal)
    return _WORD.findall(rest), cjk


def _boosted(fields: Sequence[str], weight: float) -> list[str]:
    return [f"{f}^{weight:g}" for f in fields]


def lexical_query(query: str, *, strict: bool, ranked: bool = True, worded: bool = True) -> dict[str, Any] | None:
    """The scoring part of a lexical search, or None when the query has no terms.

    strict (search_memory): every one of the query's words as the SQLite store splits them
    (`text.query_terms(strict=True)`: folded words, CJK bigrams, each once) must be in
    `words` (`operator: and`), no stemming, no fuzziness; never the context. `worded=False`
    is the strict query of an index older than mapping v4 (no `words`): the words on
    `text` (the cluster's tokenizer) and each CJK run's bigrams on `text.cjk`.
    tolerant (recall): any of the query's terms as the SQLite store computes them
    (`text.query_terms`: stems, stop words out, each term once) in `terms`, the memory's
    and its neighbours' terms weighted by repetition (`records.ranked_terms`), so a term
    is scored once over the whole row, as the SQLite store scores it. `ranked=False` is
    the tolerant query of an index older than mapping v3 (no `terms`): its words on the
    English- and French-stemmed subfields of `text`, until `xmemo opensearch migrate`."""
    words, cjk = split_scripts(query)
    if not words and not cjk:
        return None
    if strict and worded:
        found = " ".join(text.query_terms(query, strict=True))
        return {"match": {"words": {"query": found, "operator": "and"}}} if found else None
    if strict:
        must: list[dict[str, Any]] = []
        if words:
            must.append({"match": {"text": {"query": " ".join(words), "operator": "and"}}})
        for run in dict.fromkeys(cjk):
            must.append({"match": {"text.cjk": {"query": run, "operator": "and"}}})
        return {"bool": {"must": must}}
    if not ranked:
        return _before_v3(words, cjk)
    found = " ".join(text.query_terms(query, strict=False))
    return {"match": {"terms": {"query": found, "operator": "or"}}} if found else None


def _before_v3(words: list[str], cjk: list[str]) -> dict[str, Any]:
    """The tolerant query of a v1/v2 index (no context: its `context` holds raw content)."""
    should: list[dict[str, Any]] = []
    if words:
        q = " ".join(text.without_stop_words(words, words))
        should.append({"multi_match": {"query": q, "type": "most_fields", "fields": ["text", "text.en", "text.fr"], "operator": "or"}})
    if cjk:
        should.append({"match": {"text.cjk": {"query": " ".join(dict.fromkeys(cjk)), "operator": "or"}}})
    return {"bool": {"should": should, "minimum_should_match": 1}}


def lexical_search(
    query: str, rf: ReadFilter, k: int, *, strict: bool, ranked: bool = True, worded: bool = True
) -> dict[str, Any] | None:
    """A `_search` body: the lexical query scored by the cluster's BM25, the visibility
    filter not scored. A strict search's hits are what search_memory returns: whole records
    (no derived field); a tolerant one's are candidates: `CANDIDATE_FIELDS` only."""
    scoring = lexical_query(query, strict=strict, ranked=ranked, worded=worded)
    if scoring is None or k <= 0:
        return None
    return {
        "size": k,
        "track_total_hits": False,
        "_source": {"excludes": SOURCE_EXCLUDES} if strict else {"includes": CANDIDATE_FIELDS},
        "query": {"bool": {"must": [scoring], "filter": visibility_filter(rf)}},
        "sort": [{"_score": "desc"}, {"created_at": "desc"}, {"reference": "desc"}],
    }


def states_search(references: Sequence[str], rf: ReadFilter) -> dict[str, Any]:
    """A `_search` body for the token states of `references` the caller may see (the
    late-interaction leg's pool): the visibility filter and the references, nothing scored."""
    return _by_reference(references, rf, {"includes": ["reference", "token_states"]})


def records_search(references: Sequence[str], rf: ReadFilter, *, states: bool = False) -> dict[str, Any]:
    """A `_search` body for the whole records of `references` the caller may see (the
    candidates a read returns), with their token states too when `states` (the late leg's
    pool, whose best are what recall returns: one round trip for both)."""
    excludes = [f for f in SOURCE_EXCLUDES if not (states and f == "token_states")]
    return _by_reference(references, rf, {"excludes": excludes})


def _by_reference(references: Sequence[str], rf: ReadFilter, source: dict[str, Any]) -> dict[str, Any]:
    """The visibility filter and the references, nothing scored, `size` the references."""
    refs = sorted(set(references))
    return {
        "size": len(refs),
        "track_total_hits": False,
        "_source": source,
        "query": {"bool": {"filter": [*visibility_filter(rf), {"terms": {"reference": refs}}]}},
    }


# -- k-NN ------------------------------------------------------------------------------------
def knn_search(vector: Sequence[float], rf: ReadFilter, k: int) -> dict[str, Any]:
    """A `_search` body for the semantic leg. The visibility filter sits INSIDE the `knn`
    clause (efficient filtering, lucene/faiss engines): the graph search only walks the
    caller's documents, so k neighbours come back even when other tenants' vectors are
    nearer. A `bool.filter` beside the knn clause would post-filter and lose hits. The
    hits are candidates (`CANDIDATE_FIELDS`) with their packed vectors:
    `retrieval.discount_hubs` compares them with each other."""
    return {
        "size": k,
        "track_total_hits": False,
        "_source": {"includes": [*CANDIDATE_FIELDS, "vector_bytes"]},
        "query": {
            "knn": {
                "embedding": {
                    "vector": [float(x) for x in vector],
                    "k": k,
                    "filter": {"bool": {"filter": visibility_filter(rf)}},
                }
            }
        },
    }


def cosine_from_knn_score(score: float) -> float:
    """`cosinesimil` scores are (2 - (1 - cos)) / 2 = (1 + cos) / 2; fusion wants the cosine."""
    return 2.0 * score - 1.0


def msearch_body(index: str, searches: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Header/body pairs of one `_msearch` round trip."""
    out: list[dict[str, Any]] = []
    for body in searches:
        out.append({"index": index})
        out.append(body)
    return out


# -- listing ------------------------------------------------------------------------------------
def list_search(rf: ReadFilter, limit: int, cursor: str | None) -> dict[str, Any]:
    """Newest first with a `search_after` cursor on (created_at, reference)."""
    body: dict[str, Any] = {
        "size": limit + 1,
        "track_total_hits": False,
        "_source": {"excludes": SOURCE_EXCLUDES},
        "query": {"bool": {"filter": visibility_filter(rf)}},
        "sort": [{"created_at": "desc"}, {"reference": "desc"}],
    }
    if cursor:
        body["search_after"] = decode_cursor(cursor)
    return body


def encode_cursor(sort_values: Sequence[Any]) -> str:
    """A list cursor from the last hit's `sort` values."""
    return records.encode_cursor(sort_values)


def decode_cursor(cursor: str) -> list[Any]:
    """The `search_after` values of a list cursor: (created_at in epoch ms, reference)."""
    return records.decode_cursor(cursor, int, str)


# -- deletes and lookups -----------------------------------------------------------------------
def delete_query(rf: ReadFilter, reference: str | None) -> dict[str, Any]:
    clauses = visibility_filter(rf)
    if reference is not None:
        clauses = [*clauses, {"term": {"reference": reference}}]
    return {"query": {"bool": {"filter": clauses}}}


def expired_query(now: datetime) -> dict[str, Any]:
    return {"query": {"bool": {"filter": [{"range": {"expires_at": {"lte": iso(now)}}}]}}}


def reference_lookup(reference: str) -> dict[str, Any]:
    """Find a memory by reference wherever it lives (its slot or a retired id); internal,
    for supersede bookkeeping only: callers' reads use `visibility_filter`."""
    return {"size": 2, "_source": False, "query": {"bool": {"filter": [{"term": {"reference": reference}}]}}}


def superseding_since(since: datetime, size: int, after: list[Any] | None = None) -> dict[str, Any]:
    """Memories written since `since` that supersede another, oldest first, a page at a
    time; internal, for the sweep that finishes cut-off supersedes (no caller reads it)."""
    body: dict[str, Any] = {
        "size": size,
        "_source": ["reference", "supersedes", "created_at"],
        "query": {"bool": {"filter": [{"exists": {"field": "supersedes"}}, {"range": {"created_at": {"gte": iso(since)}}}]}},
        "sort": [{"created_at": "asc"}, {"reference": "asc"}],
    }
    if after is not None:
        body["search_after"] = after
    return body


def unmarked(references: Sequence[str]) -> dict[str, Any]:
    """Which of `references` are not marked superseded (internal, like `reference_lookup`)."""
    return {
        "size": len(references),
        "_source": ["reference"],
        "query": {"bool": {"filter": [{"terms": {"reference": list(references)}}], "must_not": [{"exists": {"field": "superseded_by"}}]}},
    }


def get_search(reference: str, rf: ReadFilter) -> dict[str, Any]:
    return {
        "size": 1,
        "_source": {"excludes": SOURCE_EXCLUDES},
        "query": {"bool": {"filter": [*visibility_filter(rf), {"term": {"reference": reference}}]}},
    }


# -- neighbouring context -------------------------------------------------------------------------
def epoch_ms(value: datetime) -> int:
    """A time as OpenSearch sorts a `date`: whole epoch milliseconds."""
    return int(value.timestamp() * 1000)


def neighbour_searches(group: Sequence[Any], created_at: datetime, reference: str, per_side: int) -> list[dict[str, Any]]:
    """Two `_search` bodies: the `per_side` memories just before and just after a position
    (`created_at`, `reference`) in a context group (`records.CONTEXT_GROUP` values), the
    position itself excluded (`search_after` is strict). Internal: the context rewrite
    reads them, a caller never does, and they stay within one holder."""
    clauses = [{"term": {name: value}} for name, value in zip(records.CONTEXT_GROUP, group)]
    after = [epoch_ms(created_at), reference]
    return [
        {
            "size": per_side,
            "track_total_hits": False,
            "_source": ["content", "text"],
            "query": {"bool": {"filter": clauses}},
            "sort": [{"created_at": order}, {"reference": order}],
            "search_after": after,
        }
        for order in ("desc", "asc")
    ]


def context_update(index: str, doc_id: str, fields: dict[str, Any]) -> list[dict[str, Any]]:
    """`_bulk` lines that set one document's context and what follows from it (the ranked
    terms that include it, the row length: `context.ranked_fields`)."""
    return [{"update": {"_index": index, "_id": doc_id}}, {"doc": fields}]


def positions_search(query: dict[str, Any], size: int, after: list[Any] | None = None) -> dict[str, Any]:
    """The context positions of the documents a delete is about to remove, a page at a time
    (internal: `query` is the delete's own, visibility filter included)."""
    body: dict[str, Any] = {
        "size": size,
        "track_total_hits": False,
        "_source": ["holder", "location", "bucket", "temporary", "created_at", "reference"],
        "query": query,
        "sort": [{"created_at": "asc"}, {"reference": "asc"}],
    }
    if after is not None:
        body["search_after"] = after
    return body


def group_order(size: int, fields: Sequence[str], after: list[Any] | None = None) -> dict[str, Any]:
    """Every document in context-group order, a page at a time (for rebuilding contexts
    after a migration; internal, no caller reads it)."""
    body: dict[str, Any] = {
        "size": size,
        "_source": list(fields),
        "query": {"match_all": {}},
        "sort": [*({name: "asc"} for name in records.CONTEXT_GROUP), {"created_at": "asc"}, {"reference": "asc"}],
    }
    if after is not None:
        body["search_after"] = after
    return body
