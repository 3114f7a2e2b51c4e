"""The French/Korean set of the benchmark (tests/data/multilingual.json) through the real
recall path: with the default settings every question's memory is in the top 5, and the
core lexical cases hold without the semantic leg."""

import json
from pathlib import Path

import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.models import RecallInput, RememberInput

DATA = json.loads((Path(__file__).parents[1] / "data" / "multilingual.json").read_text(encoding="utf-8"))


def _store_all(svc, p) -> dict[str, str]:
    refs = {}
    for m in DATA["memories"]:
        r = tools.remember(svc, p, RememberInput(content=m["content"], location=f"multilingual/{m['lang']}"))
        refs[r.memory.reference] = m["id"]
    return refs


@pytest.mark.embedder
def test_every_multilingual_question_finds_its_memory_in_the_top_5(semantic_services):
    p = make_principal()
    ids = _store_all(semantic_services, p)
    misses = []
    for q in DATA["questions"]:
        hits = tools.recall(semantic_services, p, RecallInput(query=q["query"], limit=5)).results
        got = {ids[h.reference] for h in hits}
        if not set(q["expected"]) <= got:
            misses.append(q["query"])
    assert misses == []


@pytest.mark.parametrize(
    "query, expected",
    [("작업", "ko-01"), ("authentification", "fr-02"), ("deployer production", "fr-03"), ("Helios", "fr-10")],
)
def test_lexical_leg_alone_keeps_word_forms_and_accents(services, query, expected):
    p = make_principal()
    ids = _store_all(services, p)
    hits = tools.recall(services, p, RecallInput(query=query, limit=3)).results
    assert hits and ids[hits[0].reference] == expected
