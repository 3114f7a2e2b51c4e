"""The evidence cut's parts (`xmemo.retrieval.evidence`): a candidate's own evidence, the cut relative
to the best, the IDF-weighted share of the query's terms, the absolute gate, and which
locations are a conversation (`records.is_conversation`)."""

from datetime import datetime, timezone

from xmemo.retrieval import evidence
from xmemo.config import RetrievalSettings
from xmemo.models import Memory
from xmemo.retrieval.fusion import Ranked
from xmemo.store import records


def _r(ref: str, content: str, location: str = "repos/api") -> Ranked:
    at = datetime(2025, 1, 1, tzinfo=timezone.utc)
    m = Memory(reference=ref, type="note", content=content, location=location, bucket="default", owner="o",
               boundary="owner:o", created_at=at, updated_at=at, content_sha256=ref)
    return Ranked(m, 1.0)


def test_the_cut_is_relative_to_the_best_and_keeps_it():
    assert evidence.keeps([0.2, 0.18, 0.1], 0.85) == [True, True, False]
    assert evidence.keeps([0.02, 0.018, 0.01], 0.85) == [True, True, False]  # the same shape at any scale
    assert evidence.keeps([0.2, 0.1], 0.0) == [True, True]  # off
    assert evidence.keeps([-0.1, -0.2], 0.85) == [True, True]  # no positive evidence: nothing to be close to


def test_rare_query_terms_weigh_more():
    shares = evidence.coverage("billing invoice", ["the billing invoice worker", "the billing database", "the billing team lunch"])
    assert shares[0] == 1.0 and shares[1] == shares[2] < 0.2  # "billing" is everywhere, "invoice" once


def test_evidence_adds_what_each_leg_scored():
    assert evidence.score(0.1, 0.5, 0.4, 0.1, 0.2) == 0.1 + 0.05 + 0.08
    assert evidence.score(None, 0.5, None, 0.1, 0.2) == 0.05


def test_a_conversation_is_what_its_location_says():
    assert records.is_conversation("chat/2026-03-02") and records.is_conversation("conversations/support/4711")
    assert not records.is_conversation("meetings/product-weekly") and not records.is_conversation("repos/chat-service")
    assert records.has_context("chat/s1", "default") and not records.has_context("repos/api", "default")


S = RetrievalSettings(evidence_cut=0.85, evidence_floor=0.19, small_evidence_floor=0.135, evidence_coverage_weight=0.1, evidence_late_weight=0.2,
                      match_floor=-1.0)


def test_notes_are_cut_turns_are_not_and_nothing_past_the_head_but_turns():
    ranked = [_r("a", "deploys go out on tuesdays"), _r("t", "Bo: yes", "chat/1"), _r("b", "lint with ruff"),
              _r("c", "deploys are frozen in december"), _r("u", "Ann: ok", "chat/1")]
    lifts = {"a": 0.3, "b": 0.05, "t": 0.0}
    kept, plan = evidence.cut("when do deploys go out", ranked, list, lifts, {}, S, 3, True)
    assert [r.memory.reference for r in kept] == ["a", "t", "u"]  # b cut, c past the head, turns kept
    assert plan["used"] and plan["kept"] == 3 and plan["dropped"] == 2 and plan["turns"] == 1


def test_weak_best_evidence_empties_a_ranking_of_notes():
    ranked = [_r("a", "deploys go out on tuesdays"), _r("b", "lint with ruff")]
    kept, plan = evidence.cut("guest wifi password", ranked, list, {"a": 0.05, "b": 0.04}, {}, S, 3, True)
    assert kept == [] and plan["gated"] == 2 and "dropped" not in plan
    # in a small store a paraphrase has weaker evidence: the lower `small_evidence_floor` (0.135 here)
    kept, plan = evidence.cut("guest wifi password", ranked, list, {"a": 0.15, "b": 0.04}, {}, S, 3, False)
    assert [r.memory.reference for r in kept] == ["a"] and plan["floor"] == 0.135
    kept, plan = evidence.cut("guest wifi password", ranked, list, {"a": 0.15, "b": 0.04}, {}, S, 3, True)
    assert kept == [] and plan["by"] == "evidence_floor"  # the same evidence in a crowded store
    late = {"a": 0.35, "b": 0.3}  # 0.05 + 0.2 x 0.35 = 0.12 < 0.135
    kept, plan = evidence.cut("guest wifi password", ranked, list, {"a": 0.05, "b": 0.04}, late, S, 3, False)
    assert kept == [] and plan["by"] == "small_evidence_floor"
    # without late scores (an embedder without token states) the small-store floor, fitted with them, does not apply
    kept, _ = evidence.cut("guest wifi password", ranked, list, {"a": 0.05, "b": 0.04}, {}, S, 3, False)
    assert [r.memory.reference for r in kept] == ["a"]
    # a note a query word abbreviates is evidence enough ("auth" of "authentication")
    kept, _ = evidence.cut("guest wifi password", ranked, list, {"a": 0.05, "b": 0.04}, late, S, 3, False, frozenset({"a"}))
    assert [r.memory.reference for r in kept] == ["a"]
    # without a semantic leg (no lifts) shared words are all the evidence there is: no cut, no gate
    kept, plan = evidence.cut("deploys", ranked, list, {}, {}, S, 3, True)
    assert [r.memory.reference for r in kept] == ["a", "b"] and plan["used"] is False
    # a ranking holding a conversation's turn is not gated: a turn's evidence is its conversation's
    kept, _ = evidence.cut("guest wifi password", [*ranked, _r("t", "Bo: yes", "chat/1")], list, {"a": 0.05}, {}, S, 3, True)
    assert [r.memory.reference for r in kept] == ["a", "t"]


M = RetrievalSettings(evidence_cut=0.85, evidence_floor=0.19, small_evidence_floor=-1.0, evidence_coverage_weight=0.05,
                      evidence_late_weight=0.2, match_floor=0.30, match_coverage_weight=0.5)


def test_a_note_matches_by_its_late_score_and_the_terms_it_holds():
    assert evidence.match(0.5, 0.2, 0.5) == 0.2 + 0.25
    assert evidence.match(1.0, None, 0.5) is None  # the late leg did not score it: no measure, no gate


def test_a_note_that_holds_nothing_of_the_query_empties_the_answer_at_any_size():
    """Lifted like a paraphrase (same script as the query), but neither its tokens nor its
    terms match the query: empty, even in a small store (crowded False)."""
    ranked = [_r("a", "배포는 금요일에 하지 않기로 결정했다."), _r("b", "시범 운영 후 로그 수집 도구로 Fluentd 채택.")]
    lifts, late = {"a": 0.09, "b": 0.08}, {"a": 0.27, "b": 0.25}
    kept, plan = evidence.cut("자전거 어디서 사", ranked, list, lifts, late, M, 3, False)
    assert kept == [] and plan["by"] == "match_floor" and plan["match"] == 0.27 and plan["gated"] == 2
    # the same scores for a query that holds a word of the note: its terms count (0.27 + 0.5 x its share)
    kept, plan = evidence.cut("Fluentd 도구", ranked, list, lifts, late, M, 3, False)
    assert [r.memory.reference for r in kept] == ["b"] and plan["match"] >= 0.30
    # a query word that abbreviates a word of the note is evidence of its own ("auth" of "authentication")
    kept, _ = evidence.cut("자전거 어디서 사", ranked, list, lifts, late, M, 3, False, frozenset({"a"}))
    assert [r.memory.reference for r in kept] == ["a", "b"]  # answered (the relative cut keeps both)
    # no late score (no stored token states) means no measure: not gated
    kept, _ = evidence.cut("자전거 어디서 사", ranked, list, lifts, {}, M, 3, False)
    assert [r.memory.reference for r in kept] == ["a", "b"]  # answered (the relative cut keeps both)
    # a ranking holding a conversation's turn is not gated
    kept, _ = evidence.cut("자전거 어디서 사", [*ranked, _r("t", "Bo: yes", "chat/1")], list, lifts, late, M, 3, False)
    assert "t" in [r.memory.reference for r in kept]
    # -1 switches the gate off
    kept, _ = evidence.cut("자전거 어디서 사", ranked, list, lifts, late, M.model_copy(update={"match_floor": -1.0}), 3, False)
    assert [r.memory.reference for r in kept] == ["a", "b"]  # answered (the relative cut keeps both)
