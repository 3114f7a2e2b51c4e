"""`xmemo.late`: MaxSim as its docstring defines it, the IDF counted among the memories
scored, and token states that survive the bytes a store keeps them in."""

from __future__ import annotations

import numpy as np
import pytest

from xmemo import late


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
