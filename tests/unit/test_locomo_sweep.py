"""The rule that picks the default relevance floors from the swept curve."""

from xmemo.bench.locomo.sweep import GRID, choose


def _row(sf, rf, r10, foreign, nonsense, multi=1.0, uf=0.08, un=0.11):
    return {
        "semantic_floor": sf, "relevance_floor": rf, "unknown_words_floor": uf, "unknown_names_floor": un, "locomo_recall@10": r10,
        "multilingual_recall@5": multi, "foreign_empty": foreign, "nonsense_empty": nonsense,
    }


def test_the_first_grid_row_switches_the_floors_off():
    assert GRID[0] == (-1.0, -1.0, -1.0, -1.0) and len(set(GRID)) == len(GRID)


def test_most_foreign_abstention_within_the_recall_budget():
    rows = [
        _row(-1, -1, 0.70, 0.0, 0.0),
        _row(0.06, 0.09, 0.70, 0.2, 1.0),
        _row(0.07, 0.09, 0.695, 0.3, 1.0),
        _row(0.08, 0.09, 0.68, 0.6, 1.0),  # loses 0.02 of recall@10
        _row(0.065, 0.08, 0.70, 0.5, 0.99),  # lets one nonsense query through
    ]
    assert choose(rows) == {"semantic_floor": 0.07, "relevance_floor": 0.09, "unknown_words_floor": 0.08, "unknown_names_floor": 0.11}
    assert choose(rows, max_loss=0.03) == {"semantic_floor": 0.08, "relevance_floor": 0.09, "unknown_words_floor": 0.08, "unknown_names_floor": 0.11}


def test_ties_go_to_the_higher_recall_and_nothing_may_qualify():
    rows = [_row(-1, -1, 0.70, 0.0, 0.0), _row(0.06, 0.09, 0.695, 0.3, 1.0), _row(0.07, 0.09, 0.70, 0.3, 1.0)]
    assert choose(rows) == {"semantic_floor": 0.07, "relevance_floor": 0.09, "unknown_words_floor": 0.08, "unknown_names_floor": 0.11}
    assert choose([_row(-1, -1, 0.7, 0, 0), _row(0.07, 0.09, 0.7, 0.3, 0.95)]) is None


def test_a_plateau_is_left_by_its_middle():
    rows = [_row(-1, -1, 0.70, 0.0, 0.0)] + [_row(0.07, 0.09, 0.70, 0.3, 1.0, uf=uf) for uf in (0.085, 0.075, 0.08)]
    assert choose(rows)["unknown_words_floor"] == 0.08
    assert choose(rows[:3])["unknown_words_floor"] == 0.075  # two tied: the lower middle


def test_no_loss_on_the_french_korean_set_is_allowed():
    rows = [_row(-1, -1, 0.70, 0.0, 0.0), _row(0.07, 0.09, 0.70, 0.3, 1.0), _row(0.08, 0.1, 0.70, 0.5, 1.0, multi=0.987)]
    assert choose(rows) == {"semantic_floor": 0.07, "relevance_floor": 0.09, "unknown_words_floor": 0.08, "unknown_names_floor": 0.11}
    without = [{k: v for k, v in r.items() if k != "multilingual_recall@5"} for r in rows]  # not asked: no constraint
    assert choose(without) == {"semantic_floor": 0.08, "relevance_floor": 0.1, "unknown_words_floor": 0.08, "unknown_names_floor": 0.11}


def test_the_small_store_may_lose_nothing():
    rows = [_row(-1, -1, 0.70, 0.0, 0.0), _row(0.07, 0.09, 0.70, 0.3, 1.0), _row(0.08, 0.1, 0.70, 0.5, 1.0)]
    rows[0]["seeds_recall@3"], rows[1]["seeds_recall@3"], rows[2]["seeds_recall@3"] = 1.0, 1.0, 0.714
    assert choose(rows) == {"semantic_floor": 0.07, "relevance_floor": 0.09, "unknown_words_floor": 0.08, "unknown_names_floor": 0.11}


def test_the_middle_is_taken_floor_by_floor():
    plateau = [(0.07, 0.08, 0.08), (0.07, 0.09, 0.075), (0.07, 0.09, 0.08), (0.07, 0.09, 0.085)]
    rows = [_row(-1, -1, 0.70, 0.0, 0.0)] + [_row(sf, rf, 0.70, 0.3, 1.0, uf=uf) for sf, rf, uf in plateau]
    assert choose(rows) == {"semantic_floor": 0.07, "relevance_floor": 0.09, "unknown_words_floor": 0.08, "unknown_names_floor": 0.11}
