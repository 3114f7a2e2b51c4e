"""The eighth round's replica helpers (`research.locomo.breadth`) on hand-made data: the
neighbour graphs and the penalties mean what the docs say. The rows at no weight and the
command itself are tested on the tiny LoCoMo file in test_locomo_bench.py."""

from __future__ import annotations

import numpy as np

from research.locomo import breadth


def _unit(rows: list[list[float]]) -> np.ndarray:
    M = np.array(rows, np.float32)
    return M / np.linalg.norm(M, axis=1, keepdims=True)


def test_exact_neighbours_are_the_nearest_others_and_can_skip_the_own_location():
    M = _unit([[1, 0], [0.9, 0.1], [0, 1], [0.8, 0.2]])
    assert breadth.exact_neighbours(M, 2, False, None)[0] == [1, 3]
    assert breadth.exact_neighbours(M, 2, False, ["a", "a", "b", "b"])[0] == [3, 2]
    assert all(i not in row for i, row in enumerate(breadth.exact_neighbours(M, 3, True, None)))


def test_incremental_neighbours_pick_among_earlier_memories_and_link_both_ways():
    """Memory 0 chose nothing (nothing came before it) but is linked from the later memories
    that chose it; a later, nearer memory does not replace an earlier choice."""
    M = _unit([[1, 0], [0, 1], [0.7, 0.3], [0.99, 0.01]])
    linked = breadth.incremental_neighbours(M, 1, None)
    assert linked[1] == [0]  # 1 chose 0 (the only one before it)
    assert linked[2] == [0]  # 2 chose 0, its nearest before it
    assert linked[3] == [0]
    assert linked[0] == [1, 2, 3]
    assert breadth.incremental_neighbours(M, 1, ["a", "a", "a", "b"])[3] == [0]
    assert breadth.incremental_neighbours(M, 1, ["a", "a", "a", "b"])[1] == []


def test_a_turn_adjacent_to_a_better_one_of_its_location_moves_down():
    memories = [type("M", (), {"location": loc})() for loc in ("s1", "s1", "s2")]
    q = {"memories": memories}
    score = {0: 1.0, 1: 0.9, 2: 0.85}
    assert breadth.adjacent_penalty(q, score, 1, 0.0) == [0, 1, 2]
    assert breadth.adjacent_penalty(q, score, 1, 0.1) == [0, 2, 1]


def test_question_share_counts_sentences_that_ask():
    assert breadth.question_share("Ann: How was it? Great, I hope.") == 0.5
    assert breadth.question_share("Bo: What made you try pottery?") == 1.0
    assert breadth.question_share("Bo: I went fishing.") == 0.0
