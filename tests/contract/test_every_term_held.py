"""A memory that holds every word a weak query asks, in any inflection, is answered on every
store: "sunsetting" finds "will be sunset". Such a query lifts no memory far enough for shared words to count on their own
(`relevance.lexical_trusted`), and the strict look behind "one memory holds every query
term" asks for surface words, stop words too, so before, it came back empty."""

from __future__ import annotations

import pytest

from xmemo import tools
from xmemo.models import ContextInput, RecallInput

PLACE = "meetings/product-weekly"
NOTES = [
    "The desktop app will be sunset on 31 March and its users pointed to the web app.",
    "Lucia Moreno is Northwind's procurement lead; contract questions go to her.",
    "The enterprise plan has a minimum of 25 seats, billed annually.",
    "Release notes are drafted by the product manager on duty and reviewed on Thursdays.",
    "The customer advisory board meets on the second Thursday of each quarter.",
    "Support tickets tagged billing are routed to the finance queue.",
]


@pytest.fixture
def notes(alices_notes):
    return alices_notes(NOTES, PLACE, crowded=True)


@pytest.mark.knn
@pytest.mark.embedder
def test_a_memory_holding_every_asked_word_in_any_form_is_answered(notes):
    svc, alice, refs = notes
    result = tools.recall_context(svc, alice, ContextInput(query="sunsetting"))
    assert [i.reference for i in result.items] == [refs[0]], result.retrieval_plan
    assert result.retrieval_plan["relevance"]["every_term_matched"] is True
    assert [h.reference for h in tools.recall(svc, alice, RecallInput(query="sunsetting")).results] == [refs[0]]


@pytest.mark.knn
@pytest.mark.embedder
def test_a_memory_holding_only_some_of_them_is_not_enough(notes):
    svc, alice, _ = notes
    result = tools.recall_context(svc, alice, ContextInput(query="sunsetting the kayak fleet"))
    assert result.retrieval_plan["relevance"]["every_term_matched"] is False
