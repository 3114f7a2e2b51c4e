"""A store of unrelated notes kept in one place, on every store: a question about one note
packs that note and not its neighbours, a question with two answers packs both, and a
question about nothing stored gets the SPEC's empty text (SPEC §4, §5). Notes written one
after another in one location are no conversation (`records.is_conversation`): they lend
each other no words and no score, and the pack stops where the evidence stops
(`xmemo.retrieval.evidence`)."""

from __future__ import annotations

import pytest

from xmemo import render, tools
from xmemo.models import ContextInput, RecallInput, RememberInput
from xmemo.render import NO_MATCH

PLACE = "repos/billing-api"
NOTES = [
    "Invoices are rendered to PDF with WeasyPrint in a separate worker.",
    "Failed card charges are retried three times, on day 1, day 3 and day 7.",
    "Currency conversion uses the European Central Bank daily reference rates.",
    "The billing database is Postgres 16 with nightly backups to S3.",
    "Code review needs two approvals before a pull request is merged.",
    "Run the tests locally with docker compose and pytest.",
    "Refunds above 500 euros need approval from the finance lead.",
    "Refunds are paid back to the original card within five business days.",
]
# (question, the notes that answer it)
ASKED = [
    ("how many times is a failed card charge retried", [1]),
    ("which exchange rates do we use for currency conversion", [2]),
    ("how are invoice PDFs generated", [0]),
    ("how many approvals does a pull request need", [4]),
    ("refunds", [6, 7]),
]


@pytest.fixture
def notes(alices_notes):
    return alices_notes(NOTES, PLACE)


@pytest.mark.knn
@pytest.mark.embedder
def test_a_question_about_one_note_packs_that_note_alone(notes):
    svc, alice, refs = notes
    for question, answers in ASKED:
        if len(answers) > 1:
            continue
        result = tools.recall_context(svc, alice, ContextInput(query=question))
        packed = [i.reference for i in result.items]
        assert packed == [refs[answers[0]]], (question, [NOTES[refs.index(r)] for r in packed])
        assert result.retrieval_plan["cut"]["used"] is True
        recalled = [h.reference for h in tools.recall(svc, alice, RecallInput(query=question)).results]
        assert recalled == [refs[answers[0]]], question


@pytest.mark.knn
@pytest.mark.embedder
def test_a_question_with_two_answers_packs_both(notes):
    svc, alice, refs = notes
    question, answers = ASKED[-1]
    packed = [i.reference for i in tools.recall_context(svc, alice, ContextInput(query=question)).items]
    assert set(packed) == {refs[i] for i in answers}, [NOTES[refs.index(r)] for r in packed]


@pytest.mark.knn
@pytest.mark.embedder
def test_a_question_about_nothing_stored_gets_the_empty_text(notes):
    """In a store the caller sees at least `semantic_candidates` of (crowded, as an agent's
    store soon is; here the setting is lowered to the store's size): in a smaller one a typo
    or a paraphrase has no more evidence than these, and `recall` must stay tolerant."""
    svc, alice, _ = notes
    svc.retrieval = svc.retrieval.model_copy(update={"semantic_candidates": len(NOTES)})
    # each shares a word or a theme with some note (deploy, backups, CI), none is answered
    for question in ("how do we deploy the mobile app", "backup of the laptops", "which CI runner do we use"):
        result = tools.recall_context(svc, alice, ContextInput(query=question))
        assert render.text(result) == NO_MATCH, (question, [i.content for i in result.items])
        assert tools.recall(svc, alice, RecallInput(query=question)).results == [], question


@pytest.mark.parametrize("location", ["notes/s1", "chat/s1"], ids=["notes", "conversation"])
def test_only_a_conversation_lends_its_neighbours_words(svc, person, location):
    """Consecutive notes of one location are unrelated: a note is found by its own words only.
    Memories in a location that says it is a conversation (`chat/…`) are its turns: a reply is
    found by the words of the question before it (neighbouring context), and is not cut."""
    alice = person("alice")

    def remember(content: str) -> str:
        return tools.remember(svc, alice, RememberInput(content=content, location=location)).memory.reference

    asked = remember("Ann: Have you ever been to Lisbon?")
    reply = remember("Bo: Yes, twice last year, with my sister.")
    hits = [h.reference for h in tools.recall(svc, alice, RecallInput(query="Lisbon", limit=10)).results]
    assert hits[0] == asked
    assert (reply in hits) is location.startswith("chat/")
