"""The order of what a store of notes returns, on every store: a query whose candidates are
mostly notes ranks with the notes' leg weights (`retrieval.fusion.leg_weights`), a
conversation's with LoCoMo's, and `retrieval_plan.fusion.weights` says which ran. With
LoCoMo's weights on notes, a note sharing the question's common words ("last", "quarter")
came before the one that answers it ("NPS"), and a paraphrased question in a store of 50
generated memories did not find its memory in the top 3."""

from __future__ import annotations

import random

import pytest

from xmemo import tools
from xmemo.bench import _agent_memories as gen
from xmemo.bench import notes as notes_bench
from xmemo.models import RecallInput, RememberInput
from xmemo.retrieval.profile import PROFILE

pytestmark = [pytest.mark.knn, pytest.mark.embedder]

# Four places of the notes bench's corpus (70 notes, unrelated notes written one after another
# in each), and two of its dev questions whose answer came second under LoCoMo's weights.
PLACES = ("infra/kubernetes", "oncall/platform", "customers/northwind", "meetings/product-weekly")
ASKED = {"q024": "b04", "q191": "k03"}  # "what was last quarter's NPS", "how do nodes autoscale"


def test_a_store_of_notes_ranks_the_answering_note_first(semantic_svc, person):
    alice = person("alice")
    corpus = notes_bench.load()
    ids = {}
    for note in (n for n in corpus.notes if n.location in PLACES):
        stored = tools.remember(semantic_svc, alice, RememberInput(content=note.content, type=note.type, location=note.location))
        ids[stored.memory.reference] = note.id
    questions = {q.id: q for q in corpus.questions}
    for qid, answer in ASKED.items():
        result = tools.recall(semantic_svc, alice, RecallInput(query=questions[qid].query, limit=3))
        assert [ids[h.reference] for h in result.results][:1] == [answer], questions[qid].query
        weights = result.retrieval_plan["fusion"]["weights"]
        assert weights == {
            "candidates": "notes", "lexical": PROFILE.settings.lexical_weight,
            "semantic": PROFILE.settings.notes_semantic_weight, "late": PROFILE.settings.notes_late_weight,
        }
        assert result.retrieval_plan["late"]["weight"] == PROFILE.settings.notes_late_weight


def test_a_paraphrased_question_finds_its_memory_in_a_store_of_50(semantic_svc, person):
    """Generated pairs (`xmemo.bench._agent_memories`, seed 2026, 50 memories in four
    languages): three paraphrased questions the conversation weights left out of the top 3."""
    alice = person("alice")
    pairs = gen.store(random.Random(2026), 50)
    refs = [tools.remember(semantic_svc, alice, RememberInput(content=p.memory)).memory.reference for p in pairs]
    for i in (11, 20, 23):
        hits = [h.reference for h in tools.recall(semantic_svc, alice, RecallInput(query=pairs[i].paraphrased, limit=3)).results]
        assert refs[i] in hits, (pairs[i].paraphrased, pairs[i].memory)


def test_a_conversation_keeps_the_conversation_weights(semantic_svc, person):
    alice = person("alice")
    for turn in ("Caroline: I went to the LGBTQ support group yesterday.", "Melanie: That sounds great, how was it?",
                 "Caroline: It was powerful, I felt accepted.", "Melanie: I painted a sunrise last week."):
        tools.remember(semantic_svc, alice, RememberInput(content=turn, location="conversations/caroline-melanie/session-1"))
    result = tools.recall(semantic_svc, alice, RecallInput(query="When did Caroline go to the support group?"))
    assert result.results
    assert result.retrieval_plan["fusion"]["weights"] == {
        "candidates": "conversation", "lexical": PROFILE.settings.lexical_weight,
        "semantic": PROFILE.settings.semantic_weight, "late": PROFILE.settings.late_weight,
    }
