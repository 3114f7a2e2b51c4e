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


S = RetrievalSettings(evidence_cut=0.85, evidence_floor=0.19, evidence_coverage_weight=0.1, evidence_late_weight=0.2)


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
    # in a small store a typo or a paraphrase lifts its memory no more than chance: no gate
    kept, _ = evidence.cut("guest wifi password", ranked, list, {"a": 0.05, "b": 0.04}, {}, S, 3, False)
    assert [r.memory.reference for r in kept] == ["a"]
    # without a semantic leg (no lifts) shared words are all the evidence there is: no cut, no gate
    kept, plan = evidence.cut("deploys", ranked, list, {}, {}, S, 3, True)
    assert [r.memory.reference for r in kept] == ["a", "b"] and plan["used"] is False
    # a ranking holding a conversation's turn is not gated: a turn's evidence is its conversation's
    kept, _ = evidence.cut("guest wifi password", [*ranked, _r("t", "Bo: yes", "chat/1")], list, {"a": 0.05}, {}, S, 3, True)
    assert [r.memory.reference for r in kept] == ["a", "t"]
