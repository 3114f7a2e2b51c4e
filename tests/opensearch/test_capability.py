"""A store that cannot run the semantic leg is found out when it is first used and runs
lexical-only: no request fails for a missing capability, the log says so once, and every
retrieval plan says why (issue 13). osmem-server has no k-NN plugin, which is the case."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from tests.faultproxy import FaultProxy
from xmemo import tools
from xmemo.auth import principal_from_claims
from xmemo.config import Settings
from xmemo.models import RecallInput, RememberInput, SearchInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch.manage import IndexPlan, init

pytestmark = pytest.mark.integration
ALICE = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:read xmemo/memory:write"})


class FourDims:
    """A deterministic stand-in embedder: the store's capability is what is tested here."""

    name, dimension = "four", 4

    def embed_query(self, text):
        return np.array([0.5, 0.5, 0.5, 0.5], dtype=np.float32)

    def embed_passages(self, texts):
        return np.full((len(texts), 4), 0.5, dtype=np.float32)


def services(url: str, clock, **kw) -> Services:
    settings = Settings(store="opensearch", opensearch_url=url, embedder="none", **kw)
    return Services(settings, OpenSearchStore(settings, dimension=4), FourDims(), clock)


def test_a_cluster_without_knn_runs_lexical_only_and_says_why(osmem_clone, clock, caplog):
    svc = services(osmem_clone.url, clock)
    with caplog.at_level(logging.WARNING, logger="xmemo.store.opensearch"):
        stored = tools.remember(svc, ALICE, RememberInput(content="The release train leaves on Thursdays"))
        first = tools.recall(svc, ALICE, RecallInput(query="release train"))
        again = tools.recall(svc, ALICE, RecallInput(query="when does the release train leave"))
    assert [h.reference for h in first.results] == [stored.memory.reference]
    assert again.results and "k-NN plugin" in again.retrieval_plan["semantic"]["unavailable"]
    assert sum("semantic leg off" in r.getMessage() for r in caplog.records) == 1  # once, not per request
    assert tools.search_memory(svc, ALICE, SearchInput(query="release train")).retrieval_plan["semantic"] == {"used": False}


@pytest.mark.parametrize("index_dimension, reason", [(None, "no vector field")])
def test_an_index_without_this_embedders_vectors_runs_lexical_only(osmem_clone, clock, index_dimension, reason):
    """Serverless skips the plugin check, so the mapping decides: no vector field — and
    writes leave the vector out. (Vectors of another embedder are refused instead:
    tests/opensearch/test_index_pin.py.)"""
    svc = services(osmem_clone.url, clock, opensearch_service="aoss", opensearch_refresh="true")
    init(svc.store.client, IndexPlan(svc.store.alias, index_dimension, serverless=True, replicas=0))
    stored = tools.remember(svc, ALICE, RememberInput(content="Invoices go out on the first business day"))
    result = tools.recall(svc, ALICE, RecallInput(query="invoices"))
    assert [h.reference for h in result.results] == [stored.memory.reference]
    assert reason in result.retrieval_plan["semantic"]["unavailable"]
    doc = svc.store.client.search(index=svc.store.alias, body={"query": {"match_all": {}}, "_source": ["embedding"]})
    assert all("embedding" not in h["_source"] for h in doc["hits"]["hits"])


def test_a_refused_knn_query_turns_the_leg_off_instead_of_failing(osmem_clone, clock):
    """When the check cannot settle it (here the plugin list is refused), the first k-NN
    query the cluster refuses turns the leg off; that request and the next still answer."""
    proxy = FaultProxy(osmem_clone.url)
    try:
        svc = services(proxy.url, clock)
        proxy.fail(403, times=1, only="_cat/plugins")
        stored = tools.remember(svc, ALICE, RememberInput(content="Staging runs PostgreSQL 16"))
        assert svc.store.knn  # not settled: still on
        first = tools.recall(svc, ALICE, RecallInput(query="staging database"))
        assert [h.reference for h in first.results] == [stored.memory.reference]
        assert "refused the k-NN query" in first.retrieval_plan["semantic"]["unavailable"] and not svc.store.knn
        assert tools.recall(svc, ALICE, RecallInput(query="postgresql")).results
    finally:
        proxy.close()
