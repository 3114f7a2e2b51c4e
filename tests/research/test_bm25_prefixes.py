"""The tenth round's replica (`research.locomo.bm25_prefixes`): BM25's parameters reach the
emulated lexical leg, e5's prefixes are swapped as the docs say, and the command runs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from tests.research.test_world_knowledge import _tiny_locomo, run_on_tiny
from research.locomo import recall_replica, breadth, bm25_prefixes
from xmemo.store import fts5rank


@pytest.fixture
def questions(tmp_path: Path) -> list[dict]:
    return recall_replica.collect(_tiny_locomo(tmp_path), tmp_path / "vc")


def test_lucenes_idf_never_drops_a_common_word():
    assert fts5rank.idf(10, 9) == 1e-6 and bm25_prefixes.lucene_idf(10, 9) == pytest.approx(math.log(1 + 1.5 / 9.5))
    assert bm25_prefixes.lucene_idf(10, 1) > bm25_prefixes.lucene_idf(10, 5) > bm25_prefixes.lucene_idf(10, 10) > 0


def test_bm25_parameters_reach_the_emulated_leg(questions: list[dict]):
    """FTS5's own parameters give the default ranking; b 0 ignores length; k1 changes scores."""
    q = next(q for q in questions if q["text"] == "What hobby did Ann start?")
    default = breadth.emulated_lexical(q, None, 0.0)
    assert breadth.emulated_lexical(q, None, 0.0, k1=fts5rank.K1, b=fts5rank.B) == default and default
    assert dict(breadth.emulated_lexical(q, None, 0.0, k1=2.0)) != dict(default)
    # a fourth column at weight 0 only lengthens the rows: b 0 ignores that, FTS5's b does not
    longer = [["padding"] * (3 * i) for i in range(len(q["memories"]))]
    assert breadth.emulated_lexical(q, longer, 0.0, b=0.0) == breadth.emulated_lexical(q, None, 0.0, b=0.0)
    assert dict(breadth.emulated_lexical(q, longer, 0.0)) != dict(default)
    assert bm25_prefixes.with_bm25(q, fts5rank.K1, fts5rank.B) == recall_replica.ranked(recall_replica.fused({**q, "lex": default}))


def test_e5s_prefixes_are_swapped(tmp_path: Path, questions: list[dict]):
    cache = recall_replica.open_cache(tmp_path / "vc")
    q = next(q for q in questions if q["text"] == "What animal did Bo adopt?")
    as_passage = bm25_prefixes.question_as_passage(cache, q)
    assert np.allclose(as_passage, q["M"] @ cache.inner.embed_passages([q["text"]])[0], atol=1e-5)
    assert not np.allclose(as_passage, q["M"] @ q["vector"], atol=1e-3)
    as_queries = bm25_prefixes.memories_as_queries(cache, q)
    turn = next(i for i, m in enumerate(q["memories"]) if "parrot" in m.content)
    assert as_queries[turn] == pytest.approx(float(cache.inner.embed_query(q["memories"][turn].content) @ q["vector"]), abs=1e-5)


def test_shared_terms_count_the_missed_evidence_by_how_rare_the_shared_word_is(questions: list[dict]):
    """"Where did Bo's sister move?" (multi-hop, one per conversation) is answered by "Bo: My
    sister moved to Lisbon in spring.": it shares "sister" and "move" (each in that memory alone)
    and "bo" (in more). With nothing taken as found (k 0), both answers are missed and share a
    word in at most 30 % of the memories, none in at most 10 %; recall's first ten find both."""
    assert bm25_prefixes.shared_terms(questions, (1.0, 0.3, 0.1), k=0) == (2, {1.0: 2, 0.3: 2, 0.1: 0})
    assert bm25_prefixes.shared_terms(questions, (1.0,)) == (0, {1.0: 0})


def test_the_tenth_round_command_runs(tmp_path: Path, capsys, monkeypatch):
    out = run_on_tiny(bm25_prefixes, tmp_path, capsys, monkeypatch)
    for row in ("| bm25 k1 0.9, b 0.5 |", "| bm25 with Lucene's IDF, k1 1.5, b 0.75 |",
                "| question as a passage: in place of the semantic leg |", "| memories as queries: a second semantic leg, weight 0.3 |"):
        assert row in out
    assert "| bm25 k1 1.2, b 0.75 |" not in out  # FTS5's own: the emulated row
    assert out.count("the halves") == 1 + len(bm25_prefixes.FAMILIES)
    assert "multi-hop evidence turns missed by recall's first ten: 0; sharing a term with the question, 0 with one in at most 100% " in out
