"""An initialism the asker types for words a memory holds ("PDB" for "Pod disruption budgets")
finds that memory, on every store, crowded or small: no lexical leg finds "PDB" and the
embedding model barely lifts it, so before, a crowded store took it for a name it never
heard of and answered nothing (`relevance.stranger`). The read asks again with the words
spelled out beside the query (`pipeline._abbreviated`), and says so in `retrieval_plan`.
Chance spellings in ordinary prose ("post it in" for "PII") are not taken for one."""

from __future__ import annotations

import pytest

from xmemo import render, tools
from xmemo.models import ContextInput, RecallInput, RememberInput
from xmemo.render import NO_MATCH

PLACE = "infra/platform"
NOTES = [
    "Pod disruption budgets are required for anything running more than one replica.",
    "Cluster autoscaling uses Karpenter, with spot instances for stateless workloads.",
    "To change the on-call schedule, create an override in PagerDuty and post it in #platform-oncall.",
    "The staging cluster is shut down every night from 20:00 to 07:00 UTC to save costs.",
    "Ingress certificates are issued by cert-manager from Let's Encrypt.",
    "Secrets are read from AWS Secrets Manager through the External Secrets operator.",
    "Grafana dashboards live in the observability repository, one folder per team.",
    "Node groups are upgraded one at a time, draining each node before it is replaced.",
]


@pytest.fixture
def notes(alices_notes):
    return alices_notes(NOTES, PLACE)


def _crowded(svc) -> None:
    """The caller sees at least `semantic_candidates` memories, as an agent's store soon does."""
    svc.retrieval = svc.retrieval.model_copy(update={"semantic_candidates": len(NOTES)})


@pytest.mark.knn
@pytest.mark.embedder
@pytest.mark.parametrize("crowded", [True, False], ids=["crowded", "small"])
def test_an_initialism_finds_the_memory_that_spells_it(notes, crowded):
    svc, alice, refs = notes
    if crowded:
        _crowded(svc)
    for question in ("when do I need a PDB", "PDB rules"):
        result = tools.recall_context(svc, alice, ContextInput(query=question))
        packed = [i.reference for i in result.items]
        assert packed and packed[0] == refs[0], (question, [NOTES[refs.index(r)] for r in packed])
        assert result.retrieval_plan["lexical"]["initialisms"] == ["pod disruption budgets"]
        recalled = [h.reference for h in tools.recall(svc, alice, RecallInput(query=question)).results]
        assert recalled and recalled[0] == refs[0], question


@pytest.mark.knn
@pytest.mark.embedder
def test_in_a_crowded_store_it_packs_that_memory_alone(notes):
    svc, alice, refs = notes
    _crowded(svc)
    packed = [i.reference for i in tools.recall_context(svc, alice, ContextInput(query="when do I need a PDB")).items]
    assert packed == [refs[0]], [NOTES[refs.index(r)] for r in packed]


@pytest.mark.knn
@pytest.mark.embedder
def test_a_chance_spelling_is_no_initialism(notes):
    """"post it in" has the letters of PII, but not as a phrase of its own: the question is
    about nothing stored and stays unanswered."""
    svc, alice, _ = notes
    _crowded(svc)
    result = tools.recall_context(svc, alice, ContextInput(query="how is PII handled in the billing exports"))
    assert "initialisms" not in result.retrieval_plan["lexical"]
    assert render.text(result) == NO_MATCH, [i.content for i in result.items]


@pytest.mark.knn
@pytest.mark.embedder
def test_an_initialism_a_memory_holds_as_a_word_is_searched_as_it_is(notes):
    """A store that holds "PDB" itself knows what it stands for there: the query is not
    spelled out, and the memory that holds it comes first."""
    svc, alice, _ = notes
    _crowded(svc)
    ref = tools.remember(svc, alice, RememberInput(content="Every PDB allows at most one pod down at a time.", location=PLACE, type="fact")).memory.reference
    result = tools.recall_context(svc, alice, ContextInput(query="how many pods may a PDB take down"))
    assert [i.reference for i in result.items][:1] == [ref]
    assert "initialisms" not in result.retrieval_plan["lexical"]
