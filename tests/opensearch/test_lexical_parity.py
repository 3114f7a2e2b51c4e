"""The tolerant leg on the OpenSearch store searches what the embedded store searches
(issue 13, lexical parity): the same memories answer the same queries on both stores,
possessives, inflections, stop words, accents and Korean included. And osmem-server's
BM25, which the LoCoMo parity figure runs on, is pinned here as
`research.locomo.bm25_formulas` models it, so the figures that module prints for osmem and
for Lucene stay tied to the server."""

from __future__ import annotations

import math

import pytest
from opensearchpy import OpenSearch

from tests.conftest import make_principal
from xmemo import tools
from research.locomo.bm25_formulas import Field
from xmemo.config import Settings
from xmemo.models import RememberInput, SearchInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch.index import index_body
from xmemo.store.opensearch.manage import IndexPlan, migrate
from xmemo.store.sqlite import SQLiteStore
from xmemo.tools import _read_filter

pytestmark = pytest.mark.integration

MEMORIES = [
    ("Caroline's painting sessions start at nine.", "chat/1"),
    ("Melanie: I ran a charity race for mental health last Saturday!", "chat/1"),
    ("Caroline: the adoption agencies called back; the interviews went well.", "chat/1"),
    ("L'équipe a validé le déploiement du café.", "notes/fr"),
    ("작업을 마쳤습니다", "notes/ko"),
    ("The budget review is on Friday.", None),
]
QUERIES = [
    "What does Caroline paint?",  # a possessive in the memory, an inflection in the query
    "When did Melanie run the race?",  # ran/run differ: Snowball leaves `ran`
    "adoption agency interview",
    "What is the budget?",  # stop words out
    "cafe equipe",  # accents folded, elision split
    "작업",  # a Korean partial word (bigrams)
    "the",  # stop words alone are still searched
]


def services(store, clock) -> Services:
    return Services(Settings(embedder="none"), store, None, clock)


def found_on_both_stores(url: str, clock, tmp_path, memories, queries, *, strict: bool) -> dict[str, dict[str, set[str]]]:
    """Per store, per query: the contents of the memories its lexical leg returns, after the
    same `memories` were remembered on a fresh SQLite store and on the OpenSearch store."""
    settings = Settings(store="opensearch", opensearch_url=url, opensearch_knn=False, embedder="none")
    stores = {"sqlite": SQLiteStore(tmp_path / "x.sqlite3"), "opensearch": OpenSearchStore.from_settings(settings)}
    p = make_principal()
    found: dict[str, dict[str, set[str]]] = {}
    for name, store in stores.items():
        svc = services(store, clock)
        by_ref = {}
        for content, location in memories:
            by_ref[tools.remember(svc, p, RememberInput(content=content, location=location)).memory.reference] = content
        rf = _read_filter(svc, p, object())
        found[name] = {
            query: {by_ref[h.memory.reference] for h in store.search(query, None, rf, lexical_k=20, semantic_k=0, strict=strict).lexical}
            for query in queries
        }
        store.close()
    return found


def test_both_stores_find_the_same_memories_for_the_same_queries(osmem_clone, clock, tmp_path):
    found = found_on_both_stores(osmem_clone.url, clock, tmp_path, MEMORIES, QUERIES, strict=False)
    assert found["opensearch"] == found["sqlite"]
    assert MEMORIES[0][0] in found["opensearch"]["What does Caroline paint?"]  # `caroline's`, `painting` → carolin, paint
    assert found["opensearch"]["cafe equipe"] == {MEMORIES[3][0]}
    assert found["opensearch"]["작업"] == {MEMORIES[4][0]}


STRICT_QUERIES = [
    "Caroline",  # `Caroline's` is `caroline s` in both stores; a standard tokenizer keeps `caroline's` whole
    "Caroline's painting",
    "version 3",  # `3.5` is `3 5`; a standard tokenizer keeps `3.5` whole
    "U.S. team",
    "équipe déploiement",  # elision and accents
    "작업",  # Korean partial word (bigrams)
    "budget review Friday",
    "budget Monday",  # one word missing: nothing
]
STRICT_MEMORIES = [*MEMORIES, ("Version 3.5 shipped to the U.S. team.", None)]


def test_both_stores_find_the_same_memories_for_the_same_strict_queries(osmem_clone, clock, tmp_path):
    """`search_memory` (and `recall`'s every-term check) needs every word of the query as
    the embedded store splits words (mapping v4's `words`), not as the cluster's tokenizer
    does: before v4, `Caroline` did not find `Caroline's painting sessions` on OpenSearch."""
    found = found_on_both_stores(osmem_clone.url, clock, tmp_path, STRICT_MEMORIES, STRICT_QUERIES, strict=True)
    assert found["opensearch"] == found["sqlite"]
    assert found["opensearch"]["Caroline"] == {MEMORIES[0][0], MEMORIES[2][0]}
    assert found["opensearch"]["version 3"] == found["opensearch"]["U.S. team"] == {STRICT_MEMORIES[-1][0]}
    assert found["opensearch"]["budget Monday"] == set()


def test_a_v3_index_matches_the_clusters_tokens_until_migrate_splits_its_words(osmem_clone, clock, caplog):
    """An index without `words` (mapping v3) takes writes, answers `search_memory` from
    `text` (the cluster's tokenizer keeps `caroline's` whole, so `Caroline` misses it) and
    warns once; `migrate` moves it to the current version (v7) and computes every document's words."""
    client = OpenSearch(hosts=[osmem_clone.url])
    old = index_body(None)
    del old["mappings"]["properties"]["words"]
    old["mappings"]["_meta"] = {"xmemo_mapping_version": 3}
    client.indices.create(index="xmemo-memories-v3", body={**old, "aliases": {"xmemo-memories": {}}})
    settings = Settings(store="opensearch", opensearch_url=osmem_clone.url, opensearch_knn=False, embedder="none")
    p = make_principal()

    def strict(svc, query):
        return [h.reference for h in tools.search_memory(svc, p, SearchInput(query=query)).results]

    svc = services(OpenSearchStore.from_settings(settings), clock)
    with caplog.at_level("WARNING", logger="xmemo.store.opensearch"):
        said = tools.remember(svc, p, RememberInput(content=MEMORIES[0][0])).memory.reference
        assert strict(svc, "Caroline") == []
        assert strict(svc, "Caroline's painting") == [said]
    assert sum("no split-words field (mapping v3)" in r.getMessage() for r in caplog.records) == 1
    assert "words" not in client.search(index="xmemo-memories", body={"query": {"match_all": {}}})["hits"]["hits"][0]["_source"]
    moved = migrate(client, IndexPlan("xmemo-memories", None, replicas=0))
    assert (moved["from"], moved["to"], moved["copied"]) == ("xmemo-memories-v3", "xmemo-memories-v7", 1)
    svc = services(OpenSearchStore.from_settings(settings), clock)  # a new process: the new index has the field
    assert strict(svc, "Caroline") == strict(svc, "Caroline's painting") == [said]


def test_osmem_scores_bm25_with_sqrt_tf_and_distinct_terms_per_document(osmem_clone):
    """osmem-server 0.1.6 (bleve 2.6.1): `sqrt(tf)` and, as average field length, the
    field's distinct terms per document plus one: what `bm25_formulas.Field.osmem` computes.
    If this fails, osmem changed its scoring: rerun `python -m research bm25-formulas`
    and the parity bench, and update docs/opensearch.md."""
    client = OpenSearch(hosts=[osmem_clone.url])
    analysis = {"analyzer": {"ws": {"type": "custom", "tokenizer": "whitespace"}}}
    client.indices.create(index="bm25", body={"settings": {"analysis": analysis}, "mappings": {"properties": {"t": {"type": "text", "analyzer": "ws"}}}})
    docs = ["b x", "x y", "x y z w", "z z z", "b b x y z w v u", "q", "q r", "x", "y", "b q r s t u v w"]
    for i, d in enumerate(docs):
        client.index(index="bm25", id=str(i), body={"t": d})
    client.indices.refresh(index="bm25")
    field = Field(docs)
    assert field.mean != field.osmem_avg  # the two averages differ here, so the check can tell them apart
    for query in ("b", "b x", "z w"):
        hits = client.search(index="bm25", body={"query": {"match": {"t": query}}, "size": 20})["hits"]["hits"]
        assert hits
        for h in hits:
            i = int(h["_id"])
            assert h["_score"] == pytest.approx(sum(field.osmem(t, i) for t in query.split()), rel=1e-4), (query, docs[i])
            assert not math.isclose(h["_score"], sum(field.lucene(t, i) for t in query.split()), rel_tol=1e-3)
