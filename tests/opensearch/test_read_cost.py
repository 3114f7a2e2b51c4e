"""Every body the OpenSearch store's read path sends is bounded by the caller's documents
and its `size`: no aggregation over the index, no exact total-hit count, no count search
per query term, no query without the visibility filter (`read_cost.index_wide`). The
bodies are recorded from the store's own calls to osmem-server (recall, search_memory,
recall_context, get, list), and the k-NN and token-states bodies from their builders."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from opensearchpy import OpenSearch

from tests.conftest import make_principal
from xmemo import tools
from xmemo.auth import ReadFilter
from xmemo.config import Settings
from xmemo.models import ContextInput, GetInput, ListInput, RecallInput, RememberInput, SearchInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch import queries as q
from xmemo.store.opensearch.read_cost import index_wide, searches_of

pytestmark = pytest.mark.integration


class Recording:
    """A real client that keeps every `_search` body it sends (each body of an `_msearch`)
    and every answer, as JSON text."""

    def __init__(self, client: OpenSearch):
        self._client, self.bodies, self.answers = client, [], []

    def search(self, **kw):
        self.bodies.append(kw["body"])
        return self._kept(self._client.search(**kw))

    def msearch(self, **kw):
        self.bodies += searches_of(kw["body"])
        return self._kept(self._client.msearch(**kw))

    def _kept(self, answer):
        self.answers.append(json.dumps(answer, ensure_ascii=False))
        return answer

    def __getattr__(self, name):
        return getattr(self._client, name)


def test_no_read_path_body_grows_with_the_index(osmem_clone, clock):
    client = Recording(OpenSearch(hosts=[osmem_clone.url]))
    store = OpenSearchStore.from_settings(Settings(store="opensearch", opensearch_url=osmem_clone.url, opensearch_knn=False, embedder="none"))
    store._client = client
    svc = Services(Settings(embedder="none"), store, None, clock)
    alice, bob = make_principal("alice"), make_principal("bob")
    ref = None
    for n in range(6):
        who = alice if n % 2 else bob
        ref = tools.remember(svc, who, RememberInput(content=f"Garden note {n}: water the tomatoes at dawn.", location="chat/1")).memory.reference
    client.bodies.clear()  # the write path's own searches (neighbouring context) are not reads
    assert tools.recall(svc, alice, RecallInput(query="water the garden tomatoes")).results
    assert tools.search_memory(svc, alice, SearchInput(query="garden tomatoes")).results
    tools.recall_context(svc, alice, ContextInput(query="tomatoes at dawn"))
    tools.get_memory(svc, alice, GetInput(reference=ref))
    tools.list_memories(svc, alice, ListInput())
    # recall and recall_context: the candidates, then the records of those returned; search_memory, get, list: one each
    assert len(client.bodies) == 7
    assert {i: index_wide(b) for i, b in enumerate(client.bodies) if index_wide(b)} == {}
    store.close()


def test_a_record_crosses_the_wire_only_when_it_is_returned(osmem_clone, clock):
    """Candidates carry what ranking reads (`queries.CANDIDATE_FIELDS`); the content (and the
    rest of the record) of a memory comes back only if the read returns it: recall's few
    results, recall_context's pages. 40 matching memories, 3 returned."""
    client = Recording(OpenSearch(hosts=[osmem_clone.url]))
    store = OpenSearchStore.from_settings(Settings(store="opensearch", opensearch_url=osmem_clone.url, opensearch_knn=False, embedder="none"))
    store._client = client
    svc = Services(Settings(embedder="none"), store, None, clock)
    alice = make_principal("alice")
    contents = [f"Garden log {n:02d}: the tomatoes by the {n}th fence post got water at dawn, " + " ".join(["mulch"] * 40) for n in range(40)]
    for c in contents:
        tools.remember(svc, alice, RememberInput(content=c, location="garden"))
    client.bodies.clear()
    client.answers.clear()
    results = tools.recall(svc, alice, RecallInput(query="tomatoes water fence", limit=3)).results
    assert len(results) == 3 and all(r.content in contents for r in results)
    candidates, records = client.answers  # two round trips
    assert not any(c[:20] in candidates for c in contents)  # no content among the 40 candidates
    hits = json.loads(candidates)["responses"][0]["hits"]["hits"]
    assert len(hits) == 40 and {key for h in hits for key in h} == {"_score", "_source"}  # no _index, _id, sort
    assert {key for h in hits for key in h["_source"]} <= set(q.CANDIDATE_FIELDS)
    assert sorted(c for c in contents if c[:20] in records) == sorted(r.content for r in results)
    assert client.bodies[1]["size"] == 3
    client.answers.clear()
    pack = tools.recall_context(svc, alice, ContextInput(query="tomatoes water fence", max_items=4, max_tokens=12_000))
    assert pack.budget.used_items == 4
    sent = [c for c in contents if any(c[:20] in a for a in client.answers)]
    assert len(sent) == 4  # one page of max_items records: the pack's items
    store.close()


def test_the_knn_and_states_bodies_are_bounded_too():
    rf = ReadFilter(holders=frozenset({"owner:alice"}), now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    assert index_wide(q.knn_search([0.1] * 8, rf, 20)) == []  # the filter inside the knn clause counts
    assert index_wide(q.states_search(["mem_1", "mem_2"], rf)) == []


def test_the_check_names_what_grows_with_the_index():
    """The bodies the store sent before it ranked by the cluster's BM25: an index-wide
    `sum` with an exact count, and a count search per query term."""
    totals = {"size": 0, "track_total_hits": True, "query": {"match_all": {}}, "aggregations": {"length": {"sum": {"field": "length"}}}}
    per_term = {"size": 0, "track_total_hits": True, "query": {"term": {"terms": "garden"}}}
    assert len(index_wide(totals)) == 4
    assert index_wide(per_term) == [
        "an exact total-hit count (track_total_hits: True)", "a size-0 search (a count, not a read)",
        "a query without the visibility filter (every tenant's documents)",
    ]


def test_the_bench_reports_a_flat_wire_cost_as_the_index_grows(osmem_clone):
    """`xmemo bench store`'s wire figures: the same reads by the same callers cost the same
    searches, round trips and request bytes when other tenants' memories grow the index
    fourfold, and no body reaches the whole index."""
    from xmemo.bench.store import wire_cost

    small, large = wire_cost(osmem_clone.url, [300, 1200], tenants=4, queries=8, seed=3)
    assert (small["index_size"], large["index_size"]) == (300, 1200)
    for kind in ("recall", "search_memory"):
        for key in ("searches", "round_trips", "request_bytes"):
            assert small[kind][key] == large[kind][key] > 0, (kind, key)
        assert small[kind]["index_wide_bodies"] == large[kind]["index_wide_bodies"] == 0
        assert small[kind]["hits_returned"] == large[kind]["hits_returned"]  # other tenants' memories never come back
        assert large[kind]["response_bytes"] == pytest.approx(small[kind]["response_bytes"], rel=0.05)
