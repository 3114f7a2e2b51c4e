"""The OpenSearch store ranks its lexical candidates by the embedded store's formula
(FTS5's `bm25()`, `store.fts5rank`), whatever BM25 the cluster runs: on osmem-server,
whose bleve BM25 (`sqrt(tf)`, distinct terms as the mean length) orders these memories
otherwise, the store returns SQLite's order and SQLite's scores, for recall's tolerant
leg (context included) and for search_memory's strict one."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch

from tests.conftest import make_principal
from xmemo import tools
from xmemo.config import Settings
from xmemo.models import RememberInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch import queries as q
from xmemo.store.opensearch.index import index_body
from xmemo.store.opensearch.manage import IndexPlan, migrate
from xmemo.store.sqlite import SQLiteStore
from xmemo.tools import _read_filter

pytestmark = pytest.mark.integration

# Short and long turns of one conversation (neighbouring context on) and notes outside it:
# osmem weighs a long turn's length about as if the mean were its distinct terms, so it
# pushes down the long turns that FTS5 ranks first.
MEMORIES = [
    ("Ann: The garden needs water.", "chat/1"),
    ("Bo: I planted tomatoes, basil, peppers and three kinds of beans in the garden, then watered the garden twice "
     "because the soil was dry after a week without rain, and the garden looks great now.", "chat/1"),
    ("Ann: Lovely. Did the tomatoes survive the heat wave last summer in the garden?", "chat/1"),
    ("Bo: Mostly; the basil did not, the heat wave was too long for it.", "chat/1"),
    ("Garden tools are in the shed.", None),
    ("The shed key is under the garden gnome, next to the watering can and the old garden hose we never use.", None),
    ("Heat wave warnings: water the tomatoes at dawn.", "notes/summer"),
]
QUERIES = ["garden", "garden water", "tomatoes heat wave", "basil", "watering the garden shed"]


def remembered(store, clock):
    svc = Services(Settings(embedder="none"), store, None, clock)
    p = make_principal()
    refs = {tools.remember(svc, p, RememberInput(content=c, location=loc)).memory.reference: c for c, loc in MEMORIES}
    return refs, _read_filter(svc, p, object())


def ranked(store, rf, refs, query, strict):
    hits = store.search(query, None, rf, lexical_k=20, semantic_k=0, strict=strict).lexical
    return [(refs[h.memory.reference], h.score) for h in hits]


def opensearch_store(url: str) -> OpenSearchStore:
    return OpenSearchStore.from_settings(Settings(store="opensearch", opensearch_url=url, opensearch_knn=False, embedder="none"))


def assert_same_ranking(got, want):
    assert [c for c, _ in got] == [c for c, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-12)


@pytest.mark.parametrize("strict", [False, True], ids=["recall", "search_memory"])
def test_the_store_ranks_by_fts5s_bm25_where_the_cluster_ranks_otherwise(osmem_clone, clock, tmp_path, strict):
    lite = SQLiteStore(tmp_path / "x.sqlite3")
    lite_refs, lite_rf = remembered(lite, clock)
    store = opensearch_store(osmem_clone.url)
    refs, rf = remembered(store, clock)
    queries = QUERIES if not strict else ["garden", "tomatoes heat", "heat wave", "garden shed"]
    differs = 0
    for query in queries:
        want = ranked(lite, lite_rf, lite_refs, query, strict)
        assert want, query
        assert_same_ranking(ranked(store, rf, refs, query, strict), want)
        # the cluster's own order of the same query, as the store sent it before re-scoring
        body = q.lexical_search(query, rf, 20, strict=strict)
        server = [refs[h["_source"]["reference"]] for h in store.client.search(index=store.alias, body=body)["hits"]["hits"]]
        assert sorted(server) == sorted(c for c, _ in want)  # the same candidates ...
        differs += server != [c for c, _ in want]  # ... in another order
    assert differs, "osmem ranks every query as FTS5 does: the test no longer shows the re-scoring"
    lite.close()
    store.close()


def test_statistics_count_every_holder_and_ranking_changes_only_the_callers_order(osmem_clone, clock, tmp_path):
    """FTS5 counts every row of its table, whoever holds it; so does the store (as Lucene's
    own IDF is index-wide). Another holder's memories change the scores of the caller's
    hits exactly as on SQLite, and never add one of theirs to the caller's answer."""
    other = make_principal("bob")
    stores = {"sqlite": SQLiteStore(tmp_path / "x.sqlite3"), "opensearch": opensearch_store(osmem_clone.url)}
    answers = {}
    for name, store in stores.items():
        svc = Services(Settings(embedder="none"), store, None, clock)
        for n in range(5):
            tools.remember(svc, other, RememberInput(content=f"Bob's garden note {n}: the garden gate squeaks."))
        refs, rf = remembered(store, clock)
        answers[name] = ranked(store, rf, refs, "garden gate", False)  # KeyError if one of bob's came back
        store.close()
    assert_same_ranking(answers["opensearch"], answers["sqlite"])


def test_a_v4_index_ranks_by_the_cluster_until_migrate_records_lengths(osmem_clone, clock, tmp_path, caplog):
    """An index without `length` (mapping v4) takes writes and ranks by the cluster's BM25
    with one warning; `migrate` moves it to the current version, computes every document's length, and the
    store then ranks as SQLite does."""
    client = OpenSearch(hosts=[osmem_clone.url])
    old = index_body(None)
    del old["mappings"]["properties"]["length"]
    old["mappings"]["_meta"] = {"xmemo_mapping_version": 4}
    client.indices.create(index="xmemo-memories-v4", body={**old, "aliases": {"xmemo-memories": {}}})
    lite = SQLiteStore(tmp_path / "x.sqlite3")
    lite_refs, lite_rf = remembered(lite, clock)
    want = ranked(lite, lite_rf, lite_refs, "garden", False)
    with caplog.at_level("WARNING", logger="xmemo.store.opensearch"):
        refs, rf = remembered(opensearch_store(osmem_clone.url), clock)
        before = ranked(opensearch_store(osmem_clone.url), rf, refs, "garden", False)
    assert sum("no row-length field (mapping v4)" in r.getMessage() for r in caplog.records) == 2  # once per store
    assert [c for c, _ in before] != [c for c, _ in want]  # the cluster's order
    assert "length" not in client.search(index="xmemo-memories", body={"query": {"match_all": {}}})["hits"]["hits"][0]["_source"]
    moved = migrate(client, IndexPlan("xmemo-memories", None, replicas=0))
    assert (moved["from"], moved["to"], moved["copied"]) == ("xmemo-memories-v4", "xmemo-memories-v7", len(MEMORIES))
    assert_same_ranking(ranked(opensearch_store(osmem_clone.url), rf, refs, "garden", False), want)
    lite.close()
