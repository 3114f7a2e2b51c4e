"""The LoCoMo measures on tiny hand-made data."""

import pytest

from xmemo.bench.locomo.metrics import SystemScores, found, recall_at_k


def test_recall_at_k_counts_evidence_in_the_top_k_only():
    ranked = [["D1:1"], ["D1:2"], ["D2:5"], ["D3:1"]]
    assert recall_at_k(ranked, ["D2:5", "D3:1"], 1) == 0.0
    assert recall_at_k(ranked, ["D2:5", "D3:1"], 3) == 0.5
    assert recall_at_k(ranked, ["D2:5", "D3:1"], 4) == 1.0
    assert recall_at_k(ranked, ["D9:9"], 20) == 0.0


def test_a_result_standing_for_several_turns_counts_for_each():
    # identical turns are stored once, so one reference maps back to two dia_ids
    assert recall_at_k([["D1:1", "D4:2"]], ["D1:1", "D4:2", "D5:5"], 1) == pytest.approx(2 / 3)


def test_evidence_found_twice_counts_once():
    assert found([["D1:1"], ["D1:1"]], ["D1:1", "D1:2"]) == 0.5


def test_question_without_evidence_is_refused():
    with pytest.raises(ValueError):
        found([["D1:1"]], [])


def test_summary_averages_over_questions_and_categories():
    s = SystemScores()
    s.add("1", ["a"], [["a"], ["b"]], {500: ([["b"]], 120), 1500: ([["b"], ["a"]], 300)})
    s.add("2", ["c", "d"], [["x"], ["c"]], {500: ([], 0), 1500: ([["c"], ["d"]], 500)})
    summary = s.summary()
    assert summary["recall@1"] == 0.5  # 1 and 0
    assert summary["recall@5"] == 0.75  # 1 and 0.5
    assert summary["coverage@500"] == 0.0
    assert summary["coverage@1500"] == 1.0
    assert summary["tokens@1500"] == 400.0
    cats = s.by_category()
    assert cats["1"]["recall@1"] == 1.0 and cats["2"]["recall@1"] == 0.0
    assert cats["2"]["recall@20"] == 0.5 and cats["2"]["questions"] == 1
