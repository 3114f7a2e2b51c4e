"""A store about some people, asked about people it never heard of, answers with nothing
(SPEC §5), even when the question shares ordinary words with it and lifts a turn
moderately; its own questions, typos included, still find their turn
(`relevance.stranger`). The store is crowded (more memories than the semantic leg
fetches), as a conversation's is, or as small as a new user's."""

from __future__ import annotations

import random

import pytest

from tests.conftest import make_principal
from xmemo import render, tools
from xmemo.models import ContextInput, RecallInput, RememberInput
from xmemo.render import NO_MATCH

pytestmark = pytest.mark.embedder
ALICE = make_principal("alice")

ACTIVITIES = [
    "went hiking by the lake", "baked bread for the neighbours", "started a pottery class", "adopted a rescue dog",
    "ran a charity 5k", "painted the kitchen blue", "visited my grandmother in the hospital", "planted tomatoes in the garden",
    "signed up for a guitar course", "fixed the old bicycle", "read a novel about sailors", "cooked curry for my brother",
    "went camping in the mountains", "joined a chess club", "took photos of the sunset at the beach",
    "volunteered at the animal shelter",
]
WHEN = ["on Saturday", "last week", "yesterday", "on Monday", "this morning", "two weeks ago"]
SPEAKERS = ("Nadia", "Tomas")


def conversation(turns: int = 64) -> list[str]:
    """Two people telling each other what they did: more turns than the semantic leg fetches (60)."""
    rng = random.Random(7)
    feel = ["great", "calm", "tiring", "special", "fun"]
    return [
        f"{SPEAKERS[i % 2]}: I {ACTIVITIES[i % len(ACTIVITIES)]} {WHEN[(i * 5) % len(WHEN)]}, it felt {rng.choice(feel)}."
        for i in range(turns)
    ]


# turns: crowded (more than the semantic leg fetches), and a small store that still holds
# every turn the store's own questions ask about
@pytest.fixture(scope="module", params=[64, 15], ids=["crowded", "small"])
def chat(request, tmp_path_factory, e5):
    from xmemo.config import Settings
    from xmemo.services import Services
    from xmemo.store.sqlite import SQLiteStore

    folder = tmp_path_factory.mktemp("strangers")
    svc = Services(Settings(data_dir=folder), SQLiteStore(folder / "xmemo.sqlite3"), e5)
    turns = conversation(request.param)
    refs = [tools.remember(svc, ALICE, RememberInput(content=t, location="chat/session_1")).memory.reference for t in turns]
    return svc, dict(zip(turns, refs))


# Questions about people the store never mentions, sharing words with its turns ("dog",
# "brother", "kitchen") and lifting one of them moderately (all but the last were answered
# with that turn before names counted).
STRANGERS = [
    "Why did Priscilla adopt a dog?",
    "What did Bartholomew cook for his brother?",
    "What colour did Priscilla paint her kitchen?",
    "When did Ingrid run the charity 5k?",
    "Why did Gareth volunteer at the shelter?",
    "Where did Evelyn go camping?",
    "When did Rosalind go hiking with her sister?",
]
# The store's own questions, with typos in words and in a name.
OWN = [
    ("When did Nadia go hiking by the lake?", "hiking by the lake"),
    ("When did Nadia go hikng by the lake?", "hiking by the lake"),
    ("When did Nadai go hiking by the lake?", "hiking by the lake"),
    ("What did Tomas plnt in the gardn?", "planted tomatoes"),
    ("What did Tomas bake for the neighbours?", "baked bread"),
]


def test_questions_about_strangers_find_nothing(chat):
    svc, _ = chat
    for query in STRANGERS:
        result = tools.recall(svc, ALICE, RecallInput(query=query))
        assert result.results == [], (query, [h.content for h in result.results])
        assert render.text(tools.recall_context(svc, ALICE, ContextInput(query=query))) == NO_MATCH, query


def test_its_own_questions_with_typos_still_answer(chat):
    svc, refs = chat
    for query, about in OWN:
        hits = [h.content for h in tools.recall(svc, ALICE, RecallInput(query=query, limit=3)).results]
        assert any(about in h for h in hits), (query, hits)


def test_the_plan_says_a_name_was_unknown(chat):
    svc, _ = chat
    plan = tools.recall(svc, ALICE, RecallInput(query=STRANGERS[0])).retrieval_plan
    assert plan["semantic"]["unknown_name"] is True and plan["semantic"]["top_lift"] < svc.retrieval.unknown_names_floor
    assert tools.recall(svc, ALICE, RecallInput(query=OWN[0][0])).retrieval_plan["semantic"]["unknown_name"] is False
