"""A move copies the index in disjoint, throttled slices (`IndexPlan.reindex_slices`,
`reindex_rate`) and moves the alias only after the last one: on osmem-server every document
arrives once, and each slice's `_reindex` body is one the OpenSearch API specification
accepts."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch

from tests.opensearch import spec
from xmemo.store.opensearch.index import index_body
from xmemo.store.opensearch.manage import IndexPlan, reindex, reindex_bodies

pytestmark = pytest.mark.integration


class Reindexes:
    def __init__(self, client: OpenSearch):
        self._client, self.calls = client, []

    def reindex(self, **kw):
        self.calls.append(kw)
        return self._client.reindex(**kw)

    def __getattr__(self, name):
        return getattr(self._client, name)


def test_a_sliced_throttled_reindex_copies_every_document_once_then_moves_the_alias(osmem_clone):
    raw = OpenSearch(hosts=[osmem_clone.url])
    raw.indices.create(index="xmemo-memories-v7", body={**index_body(None, replicas=0), "aliases": {"xmemo-memories": {}}})
    for n in range(40):
        raw.index(index="xmemo-memories", id=f"s_{n}", body={"reference": f"mem_{n}", "content": f"note {n}", "text": f"note {n}"})
    raw.indices.refresh(index="xmemo-memories")
    client = Reindexes(raw)
    moved = reindex(client, IndexPlan("xmemo-memories", None, replicas=0, reindex_slices=3, reindex_rate=500))
    assert [c["body"]["source"]["slice"] for c in client.calls] == [{"id": n, "max": 3} for n in range(3)]
    assert {c["requests_per_second"] for c in client.calls} == {500}
    assert moved["copied"] == 40
    assert list(raw.indices.get_alias(name="xmemo-memories")) == [moved["to"]]
    refs = {h["_source"]["reference"] for h in raw.search(index="xmemo-memories", body={"size": 100, "query": {"match_all": {}}})["hits"]["hits"]}
    assert refs == {f"mem_{n}" for n in range(40)}
    for body in reindex_bodies({"index": "xmemo-memories-v7"}, moved["to"], 3):
        assert spec.errors("POST", "/_reindex", body) == []
    broken = reindex_bodies({"index": "a"}, "b", 2)[0]
    broken["source"]["slice"]["maxx"] = broken["source"]["slice"].pop("max")
    assert spec.errors("POST", "/_reindex", broken)  # the check can fail


def test_one_slice_is_the_whole_source():
    assert reindex_bodies({"index": "a"}, "b", 1) == [{"source": {"index": "a"}, "dest": {"index": "b", "op_type": "index"}}]
