"""`xmemo.late`: MaxSim as its docstring defines it, the IDF counted among the memories
scored, and token states that survive the bytes a store keeps them in."""

from __future__ import annotations

import numpy as np
import pytest

from xmemo.retrieval import late


def _unit(rows) -> np.ndarray:
    x = np.asarray(rows, dtype=np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_each_question_token_takes_its_best_cosine_and_the_mean_is_weighted():
    q = _unit([[1, 0, 0], [0, 1, 0]])
    a = _unit([[1, 0, 0], [0, 0, 1]])  # meets the first token exactly, the second not at all
    b = _unit([[1, 1, 0]])  # meets both at cos 0.707
    empty = np.zeros((0, 3), dtype=np.float32)
    assert np.allclose(late.maxsim(q, [a, b, empty]), [0.5, 0.7071, 0.0], atol=1e-4)
    assert np.allclose(late.maxsim(q, [a, b], np.array([3.0, 1.0])), [0.75, 0.7071], atol=1e-4)
    assert np.allclose(late.maxsim(np.zeros((0, 3)), [a, b]), [0, 0]) and len(late.maxsim(q, [])) == 0


def test_the_idf_counts_only_the_memories_scored():
    documents = [{1, 2}, {1, 3}, {1}]
    w = late.idf_weights([1, 2, 9], documents)
    assert w[0] == pytest.approx(np.log(4 / 3.5))  # in every memory: almost nothing
    assert w[1] == pytest.approx(np.log(4 / 1.5)) and w[2] == pytest.approx(np.log(4 / 0.5))
    assert w[2] > w[1] > w[0] >= 0
    assert 0 < late.idf_weights([1], [{1}] * 10)[0] < 0.05 < late.idf_weights([1], [{1}] + [{2}] * 9)[0]


def test_pool_scores_are_maxsim_with_the_pools_idf():
    rng = np.random.default_rng(1)
    pool = [late.TokenStates.of(rng.integers(0, 20, n), _unit(rng.normal(size=(n, 8)))) for n in (3, 5, 1)]
    q_ids, q = np.array([4, 7, 7]), _unit(rng.normal(size=(3, 8)))
    expected = late.maxsim(q, [m.states() for m in pool], late.idf_weights(q_ids, [set(m.ids.tolist()) for m in pool]))
    assert np.allclose(late.pool_scores(q_ids, q, pool), expected)


def test_token_states_keep_each_dimensions_sign_and_come_back_from_their_bytes():
    rng = np.random.default_rng(0)
    x = _unit(rng.normal(size=(34, 384)))
    kept = late.TokenStates.of(np.arange(100, 134), x)
    signs = kept.states()
    assert np.allclose(np.abs(signs), 1 / np.sqrt(384)) and np.all(np.sign(signs) == np.sign(x))
    assert np.all(np.sum(signs * x, axis=1) > 0.7)  # a unit state and its sign vector stay close
    data = kept.to_bytes()
    assert len(data) == 7 + 34 * (4 + 48)
    back = late.TokenStates.from_bytes(data)
    assert np.array_equal(back.ids, kept.ids) and np.array_equal(back.bits, kept.bits) and back.dimension == 384
    for bad in (data[:-1], b"\x01" + data[1:], data[:3], b""):  # version 1 was int8 rows
        with pytest.raises(ValueError):
            late.TokenStates.from_bytes(bad)
    with pytest.raises(ValueError):
        late.TokenStates.of([1, 2], x)
    none = late.TokenStates.of([], np.zeros((0, 384)))
    assert late.TokenStates.from_bytes(none.to_bytes()).states().shape == (0, 384)


def _whole_pool_scores(query_ids, query_states, pool):
    """`pool_scores` as it was before the pool's bits were unpacked a block at a time: the
    whole pool unpacked to floats and multiplied at once, the IDF counted with a Counter."""
    from collections import Counter

    out = np.zeros(len(pool))
    q = np.asarray(query_states, dtype=np.float32)
    filled = [i for i, m in enumerate(pool) if len(m.ids)]
    if not filled or not len(q):
        return out
    sizes = np.array([len(pool[i].ids) for i in filled])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    d = pool[filled[0]].dimension
    ones = np.unpackbits(np.concatenate([pool[i].bits for i in filled]), axis=1, count=d).astype(np.float32)
    best = np.maximum.reduceat((2 * (q @ ones.T) - q.sum(axis=1)[:, None]) / np.sqrt(d), starts, axis=1)
    ids = np.concatenate([pool[i].ids for i in filled])
    holder = np.repeat(np.arange(len(filled)), sizes)
    asked = np.asarray(query_ids, dtype=np.int64)
    hit = np.isin(ids, asked)
    per_token = Counter(token for _, token in set(zip(holder[hit].tolist(), ids[hit].tolist())))
    w = np.log((len(pool) + 1) / (np.array([per_token.get(t, 0) for t in asked.tolist()], dtype=np.float64) + 0.5))
    out[filled] = w @ best / max(float(w.sum()), 1e-9)
    return out


def _random_pool(rng, memories: int, dimension: int = 384, vocabulary: int = 400):
    """Memories of 0–80 tokens (some empty) with ids from a small vocabulary, so question
    tokens recur across the pool as words do."""
    sizes = rng.integers(0, 80, memories)
    sizes[rng.integers(0, memories, 3)] = 0
    return [late.TokenStates.of(rng.integers(0, vocabulary, n), rng.normal(size=(n, dimension))) for n in sizes]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pool_scores_equal_the_whole_pool_product_and_rank_alike(seed):
    """The block-wise scorer gives the scores of one product over the whole pool (to float32
    rounding of the same sums) and the same order, on pools larger than a block."""
    rng = np.random.default_rng(seed)
    pool = _random_pool(rng, 300)
    assert sum(len(m.ids) for m in pool) > 2 * late.BLOCK
    q_ids = np.concatenate([rng.integers(0, 400, 10), [999_999]])  # one token no memory holds
    q = _unit(rng.normal(size=(len(q_ids), 384)))
    new, old = late.pool_scores(q_ids, q, pool), _whole_pool_scores(q_ids, q, pool)
    assert np.allclose(new, old, rtol=0, atol=1e-6)
    assert np.array_equal(np.argsort(-new, kind="stable"), np.argsort(-old, kind="stable"))
    assert np.all(new[[i for i, m in enumerate(pool) if not len(m.ids)]] == 0)


def test_pool_scores_never_hold_the_whole_pool_as_floats():
    """A pool of 300 memories × 60 tokens is 7 MB of floats unpacked at once; the scorer
    keeps one block of them (1.5 MB) however large the pool (tracemalloc sees numpy's
    allocations)."""
    import tracemalloc

    rng = np.random.default_rng(5)
    pool = [late.TokenStates.of(rng.integers(0, 400, 60), rng.normal(size=(60, 384))) for _ in range(300)]
    q = _unit(rng.normal(size=(12, 384)))
    tracemalloc.start()
    try:
        late.pool_scores(rng.integers(0, 400, 12), q, pool)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    whole = 300 * 60 * 384 * 4
    assert peak < whole / 2, f"peak {peak / 1e6:.1f} MB for a pool of {whole / 1e6:.1f} MB of floats"
