"""The sparse-head experiment's scoring (`research.locomo.sparse_terms`) on hand-made sparse
vectors: the figures of docs/research/README.md rest on these few lines, so a broken
dot product, cosine or cache fails here rather than as a plausible-looking table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from research.locomo import sparse_terms


def _vec(pairs: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    return np.array(list(pairs), np.int32), np.array(list(pairs.values()), np.float32)


# Three turns in an 8-feature space: a long turn sharing two of the query's features with
# large weights, a short turn sharing exactly the query's features, and an unrelated one.
TURNS = [_vec({0: 2.0, 1: 2.0, 4: 3.0, 5: 3.0, 6: 3.0}), _vec({0: 1.0, 1: 1.0, 2: 1.0}), _vec({7: 5.0})]
QUERY = _vec({0: 1.0, 1: 1.0, 2: 1.0})


def _question() -> dict:
    block = sparse_terms.dense_rows(TURNS, 8)
    return {"SD": block, "SDnorm": np.linalg.norm(block, axis=1), "sq": QUERY}


def test_dense_rows_place_each_value_at_its_feature():
    block = sparse_terms.dense_rows(TURNS, 8)
    assert block.shape == (3, 8) and block.dtype == np.float32
    assert block[0].tolist() == [2, 2, 0, 0, 3, 3, 3, 0]
    assert block[2].tolist() == [0, 0, 0, 0, 0, 0, 0, 5]


def test_dot_product_and_cosine_by_hand():
    q = _question()
    dot = sparse_terms.scores(q["SD"], q["SDnorm"], QUERY, cosine=False)
    assert dot.tolist() == pytest.approx([4.0, 3.0, 0.0])
    cos = sparse_terms.scores(q["SD"], q["SDnorm"], QUERY, cosine=True)
    # turn 0: 4 / (sqrt(8 + 27) * sqrt(3)); turn 1: the query itself
    assert cos.tolist() == pytest.approx([4 / (35**0.5 * 3**0.5), 1.0, 0.0])


def test_dot_favours_the_long_turn_and_cosine_the_exact_one():
    """The reason the harness has both rows: longer turns pool more features."""
    assert sparse_terms.sparse_alone(_question(), cosine=False)[0] == 0
    assert sparse_terms.sparse_alone(_question(), cosine=True)[0] == 1


def test_the_cache_round_trips_and_shares_one_array(tmp_path: Path):
    """Reloaded vectors are views of one array per key (the round-5 harness sliced a fresh
    full copy per text and was OOM-killed at 24 GB)."""
    path = tmp_path / "sparse.npz"
    cache = sparse_terms.SparseCache(path)
    cache.vectors = {"a turn": TURNS[0], "a question": QUERY}
    cache.save()
    loaded = sparse_terms.SparseCache(path)
    assert list(loaded.vectors) == ["a turn", "a question"]
    for text, (idx, val) in cache.vectors.items():
        assert loaded.vectors[text][0].tolist() == idx.tolist()
        assert loaded.vectors[text][1].tolist() == pytest.approx(val.tolist())
    (i0, v0), (i1, v1) = loaded.vectors.values()
    assert i0.base is i1.base and v0.base is v1.base
    assert loaded.get(["a question"])[0][0].tolist() == QUERY[0].tolist()  # no model needed
