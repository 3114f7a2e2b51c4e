"""The embedder's name and dimension are part of the index version (issue 13): a store
opened with embedder A and then with B (another model, or another size) does not mix
their vectors. B's store refuses, naming both and `xmemo reindex`; `migrate` creates the
next versioned index and re-embeds every memory with B, or refuses (alias untouched) when
the process cannot embed. On osmem-server, which stores `knn_vector` fields but has no
k-NN search; Serverless mode skips the plugin check, so the mapping decides."""

from __future__ import annotations

import numpy as np
import pytest

from xmemo import tools
from xmemo.auth import principal_from_claims
from xmemo.config import Settings
from xmemo.embedding import passage_embeddings
from xmemo.errors import StoreMismatch
from xmemo.models import RecallInput, RememberInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch.manage import alias_targets, migrate

pytestmark = pytest.mark.integration
ALICE = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:read xmemo/memory:write"})


class Constant:
    """A deterministic embedder: every passage gets `value` in each of `dimension` slots,
    so which embedder wrote a stored vector is visible in the index."""

    def __init__(self, name: str, dimension: int, value: float):
        self.name, self.dimension, self.value = name, dimension, value

    def embed_query(self, text):
        return np.full(self.dimension, self.value, dtype=np.float32)

    def embed_passages(self, texts):
        return np.full((len(texts), self.dimension), self.value, dtype=np.float32)


def services(url: str, clock, embedder: Constant) -> Services:
    settings = Settings(store="opensearch", opensearch_url=url, embedder="none", opensearch_service="aoss", opensearch_refresh="true")
    store = OpenSearchStore(settings, dimension=embedder.dimension, embedder=embedder.name)
    return Services(settings, store, embedder, clock)


def vectors(svc: Services) -> dict[str, list[float] | None]:
    client, alias = svc.store.client, svc.store.alias
    client.indices.refresh(index=alias)
    hits = client.search(index=alias, body={"size": 100, "query": {"match_all": {}}})["hits"]["hits"]
    return {h["_source"]["content"]: h["_source"].get("embedding") for h in hits}


@pytest.mark.parametrize("b_name, b_dimension", [("model-b", 4), ("model-a", 8)], ids=["another-model", "another-size"])
def test_a_store_opened_with_embedder_a_then_b(osmem_clone, clock, b_name, b_dimension):
    a = services(osmem_clone.url, clock, Constant("model-a", 4, 0.5))
    tools.remember(a, ALICE, RememberInput(content="Ann: the ferry leaves at nine", location="chat/1"))
    tools.remember(a, ALICE, RememberInput(content="Bo: then we take the tram", location="chat/1"))
    assert alias_targets(a.store.client, "xmemo-memories") == ["xmemo-memories-v7-model-a-4"]
    assert set(map(tuple, vectors(a).values())) == {(0.5,) * 4}

    b_embedder = Constant(b_name, b_dimension, 0.25)
    b = services(osmem_clone.url, clock, b_embedder)
    for call in (lambda: tools.remember(b, ALICE, RememberInput(content="Ann: and the museum after lunch", location="chat/1")),
                 lambda: tools.recall(b, ALICE, RecallInput(query="museum"))):
        with pytest.raises(StoreMismatch) as refused:  # refused, naming both and the command that re-embeds
            call()
        assert "model-a (4-d)" in refused.value.message and f"{b_name} ({b_dimension}-d)" in refused.value.message
        assert "`xmemo reindex`" in refused.value.message
    assert len(vectors(a)) == 2  # nothing of B's written among A's

    with pytest.raises(RuntimeError, match="run `xmemo opensearch migrate`"):
        migrate(b.store.client, b.store.plan)  # this process cannot embed: refused
    assert alias_targets(b.store.client, "xmemo-memories") == ["xmemo-memories-v7-model-a-4"]

    b.store.plan.embed = lambda texts: passage_embeddings(b_embedder, texts)  # vectors, and no states from this embedder
    moved = migrate(b.store.client, b.store.plan)
    target = f"xmemo-memories-v7-{b_name}-{b_dimension}"
    assert (moved["to"], moved["copied"], moved["re_embedded"]) == (target, 2, True)
    assert alias_targets(b.store.client, "xmemo-memories") == [target]
    assert set(map(tuple, vectors(b).values())) == {(0.25,) * b_dimension}  # every memory re-embedded with B

    again = services(osmem_clone.url, clock, b_embedder)
    assert tools.recall(again, ALICE, RecallInput(query="ferry")).results
    assert again.store.semantic_off is None or "refused the k-NN query" in again.store.semantic_off  # the index is B's
    assert migrate(again.store.client, again.store.plan)["action"] == "none"
