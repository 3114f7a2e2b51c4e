"""The request bodies, as dicts, against OpenSearch's documented shapes (no I/O)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xmemo.auth import ReadFilter
from xmemo.errors import InvalidRequest
from xmemo.models import Memory, Source
from xmemo.store.opensearch import queries as q
from xmemo.store.opensearch.index import index_body, mappings

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def rf(**kw) -> ReadFilter:
    return ReadFilter(holders=frozenset({"owner:alice", "team:acme"}), now=NOW, **kw)


def test_visibility_filter_of_a_plain_read():
    assert q.visibility_filter(rf()) == [
        {"terms": {"holder": ["owner:alice", "team:acme"]}},
        {"bool": {"must_not": [{"exists": {"field": "superseded_by"}}]}},
        {
            "bool": {
                "should": [
                    {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}},
                    {"range": {"expires_at": {"gt": "2026-01-01T12:00:00.000000Z"}}},
                ],
                "minimum_should_match": 1,
            }
        },
        {"term": {"temporary": False}},
    ]


def test_visibility_filter_with_every_narrowing():
    f = q.visibility_filter(
        rf(include_temporary=True, live_only=False, bucket="eng", type="fact", project="web", tags=("a", "b"),
           created_after=NOW - timedelta(days=1), created_before=NOW)
    )
    assert f == [
        {"terms": {"holder": ["owner:alice", "team:acme"]}},
        {"term": {"bucket": "eng"}},
        {"term": {"type": "fact"}},
        {"term": {"project": "web"}},
        {"term": {"tags": "a"}},
        {"term": {"tags": "b"}},
        {"range": {"created_at": {"gte": "2025-12-31T12:00:00.000000Z", "lt": "2026-01-01T12:00:00.000000Z"}}},
    ]


def test_no_holders_matches_nothing():
    assert q.visibility_filter(ReadFilter(holders=frozenset(), now=NOW)) == [{"bool": {"must_not": [{"match_all": {}}]}}]


def test_strict_lexical_needs_every_word_as_the_embedded_store_splits_them():
    """`text.query_terms(strict=True)` (folded words, CJK bigrams, each once) on `words`,
    which holds `records.words_text`: `Caroline's` is `caroline s`, `3.5` is `3 5`."""
    body = q.lexical_search("Postgres l'équipe 작업을 Caroline's 3.5 postgres", rf(), 10, strict=True)
    assert body["query"]["bool"]["must"] == [
        {"match": {"words": {"query": "postgres l equipe 작업 업을 caroline s 3 5", "operator": "and"}}}
    ]
    assert body["query"]["bool"]["filter"] == q.visibility_filter(rf())
    assert body["size"] == 10 and "embedding" in body["_source"]["excludes"] and "words" in body["_source"]["excludes"]
    assert q.to_document(memory(content="Caroline's 3.5 작업을"))["words"].endswith("caroline s 3 5 작업 업을")


def test_strict_lexical_on_an_index_before_v4_needs_every_word_and_every_cjk_bigram():
    body = q.lexical_search("Postgres l'équipe 작업", rf(), 10, strict=True, worded=False)
    assert body["query"]["bool"]["must"] == [
        {"bool": {"must": [
            {"match": {"text": {"query": "Postgres l'équipe", "operator": "and"}}},
            {"match": {"text.cjk": {"query": "작업", "operator": "and"}}},
        ]}}
    ]
    assert body["query"]["bool"]["filter"] == q.visibility_filter(rf())
    assert body["size"] == 10 and "embedding" in body["_source"]["excludes"]


def test_tolerant_lexical_sends_the_embedded_stores_terms_to_the_ranked_field():
    # stop words out, English Snowball stems, each term once: `text.query_terms`, as SQLite
    assert q.lexical_query("what is the Postgres database and databases", strict=False) == {
        "match": {"terms": {"query": "postgr databas", "operator": "or"}}
    }
    # only stop words: they are kept rather than searching for nothing
    assert q.lexical_query("the", strict=False) == {"match": {"terms": {"query": "the", "operator": "or"}}}
    assert q.lexical_query("Caroline's 작업", strict=False)["match"]["terms"]["query"] == "carolin s 작업"
    assert q.lexical_query("  ,; ", strict=True) is None and q.lexical_query("  ,; ", strict=False) is None


def test_tolerant_lexical_on_an_index_before_v3_uses_its_stemmed_subfields():
    assert q.lexical_query("what is the Postgres database 작업", strict=False, ranked=False) == {
        "bool": {
            "should": [
                {"multi_match": {"query": "Postgres database", "type": "most_fields", "fields": ["text", "text.en", "text.fr"], "operator": "or"}},
                {"match": {"text.cjk": {"query": "작업", "operator": "or"}}},
            ],
            "minimum_should_match": 1,
        }
    }


def test_knn_body_puts_the_visibility_filter_inside_the_knn_clause():
    body = q.knn_search([0.1, 0.2], rf(), 7)
    assert body["size"] == 7
    assert body["query"] == {
        "knn": {"embedding": {"vector": [0.1, 0.2], "k": 7, "filter": {"bool": {"filter": q.visibility_filter(rf())}}}}
    }
    assert "post_filter" not in body
    # the hits are candidates: what ranking reads, with their packed vectors (the hub discount
    # compares them), not the long JSON arrays nor the record
    assert body["_source"] == {"includes": [*q.CANDIDATE_FIELDS, "vector_bytes"]}


def test_tolerant_candidates_carry_what_ranking_reads_and_strict_hits_their_records():
    tolerant = q.lexical_search("garden tomatoes", rf(), 60, strict=False)
    assert tolerant["_source"] == {"includes": q.CANDIDATE_FIELDS}
    assert not {"content", "title", "tags", "source", "content_sha256"} & set(q.CANDIDATE_FIELDS)
    strict = q.lexical_search("garden tomatoes", rf(), 10, strict=True)  # search_memory returns its hits
    assert strict["_source"] == {"excludes": q.SOURCE_EXCLUDES}


def test_records_search_fetches_the_returned_records_within_the_visibility_filter():
    body = q.records_search(["mem_2", "mem_1", "mem_2"], rf())
    assert body["size"] == 2 and body["track_total_hits"] is False
    assert body["query"] == {"bool": {"filter": [*q.visibility_filter(rf()), {"terms": {"reference": ["mem_1", "mem_2"]}}]}}
    assert body["_source"] == {"excludes": q.SOURCE_EXCLUDES}
    with_states = q.records_search(["mem_1"], rf(), states=True)["_source"]["excludes"]
    assert "token_states" not in with_states and "embedding" in with_states and "content" not in with_states


def test_a_candidate_document_is_a_partial_memory_with_what_ranking_reads():
    src = {"reference": "mem_1", "created_at": "2026-01-01T12:00:00.000123Z", "owner": "alice", "team": None,
           "location": "chat/1", "bucket": "default", "temporary": False}
    m = q.candidate_from_document(src)
    assert (m.reference, m.created_at, m.holder, m.location, m.bucket, m.temporary) == (
        "mem_1", NOW.replace(microsecond=123), "owner:alice", "chat/1", "default", False)
    assert m.content == ""


@given(st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), max_size=400))
def test_a_packed_vector_unpacks_to_the_same_float32_values(values):
    packed = q.packed_vector(values)
    assert packed.isascii() and len(packed) <= 4 * (4 * len(values) + 2) // 3 + 4
    assert list(q.unpacked_vector(packed) or []) == values
    assert q.unpacked_vector(None) is None and q.unpacked_vector("") is None


def test_msearch_pairs_a_header_with_each_body():
    assert q.msearch_body("xmemo-memories", [{"a": 1}, {"b": 2}]) == [
        {"index": "xmemo-memories"}, {"a": 1}, {"index": "xmemo-memories"}, {"b": 2},
    ]


def test_cosinesimil_score_converts_back_to_cosine():
    assert q.cosine_from_knn_score(1.0) == 1.0 and q.cosine_from_knn_score(0.5) == 0.0
    assert q.cosine_from_knn_score(0.9) == pytest.approx(0.8)


def test_list_cursor_round_trips_and_rejects_garbage():
    body = q.list_search(rf(), 5, q.encode_cursor([1767268800000, "mem_X"]))
    assert body["search_after"] == [1767268800000, "mem_X"]
    assert body["sort"] == [{"created_at": "desc"}, {"reference": "desc"}] and body["size"] == 6
    with pytest.raises(InvalidRequest):
        q.decode_cursor("bm90IGEgY3Vyc29y")


def memory(**kw) -> Memory:
    base = dict(reference="mem_A", type="note", content="hello", location="default", bucket="default", owner="alice",
                boundary="owner:alice", created_at=NOW, updated_at=NOW, content_sha256="ab" * 32,
                source=Source(client_id="c1"), tags=("x",), embedding=(0.5, 0.5))
    base.update(kw)
    return Memory(**base)


def test_document_round_trip_and_slot_ids():
    m = memory()
    doc = q.to_document(m)
    assert doc["holder"] == "owner:alice" and doc["embedding"] == [0.5, 0.5] and doc["text"] == "default\nx\nhello"
    assert doc["terms"] == "default x hello default x hello"  # its own terms twice, no neighbours yet (weight 0.5)
    assert q.to_document(m, 0.25)["terms"] == " ".join(["default x hello"] * 4)
    assert q.from_document(doc) == m.model_copy(update={"embedding": None})  # vectors stay in the index
    assert list(q.unpacked_vector(doc["vector_bytes"])) == [0.5, 0.5]  # mapping v6: the packed copy
    assert q.slot_id(m) == q.slot_id(memory(reference="mem_B"))  # a retry lands on the same slot
    assert q.slot_id(m) != q.slot_id(memory(bucket="ops"))
    assert q.slot_id(m) != q.slot_id(memory(temporary=True))
    assert q.slot_id(m) != q.slot_id(memory(boundary="owner:alice/project:p"))


def test_mapping_has_keywords_for_filters_and_a_vector_sized_by_the_embedder():
    props = mappings(1024)["properties"]
    for field in ("holder", "owner", "team", "project", "bucket", "type", "tags", "boundary", "superseded_by"):
        assert props[field] == {"type": "keyword"}
    assert props["temporary"] == {"type": "boolean"} and props["created_at"]["type"] == "date"
    assert props["embedding"]["dimension"] == 1024
    assert props["embedding"]["method"]["space_type"] == "cosinesimil"
    assert set(props["text"]["fields"]) == {"cjk"}  # strict search; the tolerant leg reads `terms`
    assert props["terms"] == {"type": "text", "analyzer": "xm_terms"}
    assert props["words"] == {"type": "text", "analyzer": "xm_terms"}  # strict search (mapping v4)
    assert index_body(None)["settings"]["analysis"]["analyzer"]["xm_terms"] == {"type": "custom", "tokenizer": "whitespace"}
    assert props["context"] == {"type": "text", "index": False}
    assert props["length"] == {"type": "integer"}  # FTS5's row length (mapping v5)
    assert "embedding" not in mappings(None)["properties"]
    assert props["vector_bytes"] == {"type": "binary"} and "vector_bytes" not in mappings(None)["properties"]  # v6
    assert index_body(None)["settings"]["index"]["knn"] is False
    assert "number_of_shards" not in index_body(256, serverless=True)["settings"]["index"]
    assert index_body(256)["settings"]["index"]["number_of_replicas"] == 1
    assert index_body(256, replicas=0)["settings"]["index"]["number_of_replicas"] == 0
