"""A new user's store (1 to 50 memories), on every store: a short or abbreviated question
finds its memory, and nonsense or a question about a topic no memory concerns finds
nothing — never memories that share nothing with the query (SPEC §5)."""

from __future__ import annotations

import random

import pytest

from xmemo import render, tools
from xmemo.models import ContextInput, RecallInput, RememberInput
from xmemo.render import NO_MATCH

pytestmark = [pytest.mark.knn, pytest.mark.embedder]

# (memory, a short question of the kind people type: abbreviated or a word of it), several languages.
PAIRS = [
    ("We use Cognito for MCP authentication.", "auth decision"),
    ("Alice prefers dark mode in the editor.", "editor pref"),
    ("Deploy to production only on Tuesdays after the staging checks pass.", "prod deploy"),
    ("Nous utilisons PostgreSQL 16 pour la base de données principale.", "PostgreSQL"),
    ("Die Protokolle werden dreißig Tage lang aufbewahrt.", "Protokolle"),
    ("The team decided to write the command line tool in Go.", "Go tool decision"),
    ("Backups run nightly at 02:00 UTC to S3.", "backup time"),
    ("El equipo usa Terraform para la infraestructura.", "infra Terraform"),
    ("Configuration lives in environment variables, never in the repository.", "config location"),
    ("Code reviews need two approvals before merging.", "reviews approvals"),
    ("Les réunions d'équipe ont lieu le lundi à 10 heures.", "réunions lundi"),
    ("Die Dokumentation wird in Markdown geschrieben.", "Doku Markdown"),
    ("Alerts page the on-call engineer through PagerDuty.", "PagerDuty"),
    ("The mobile app targets Android 12 and newer.", "Android version"),
    ("Invoices are generated on the first day of each month.", "invoice day"),
]
FILLER = [f"Ticket {n} was closed after the customer confirmed the fix for order {n * 7}." for n in range(50)]
FOREIGN = ["what is the capital of Peru", "recipe for lasagna", "Melanie's painting hobby", "how tall is Everest"]


def nonsense(rng: random.Random) -> str:
    return " ".join("".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(rng.randint(4, 9))) for _ in range(rng.randint(1, 3)))


def contents(size: int) -> list[str]:
    return ([m for m, _ in PAIRS] + FILLER)[:size]


@pytest.mark.parametrize("size", [1, 5, 15, 50])
def test_small_store_both_ways(semantic_svc, person, size):
    alice = person("alice")
    stored = contents(size)
    refs = [tools.remember(semantic_svc, alice, RememberInput(content=c)).memory.reference for c in stored]
    for (memory, question), ref in zip(PAIRS, refs):
        hits = [h.reference for h in tools.recall(semantic_svc, alice, RecallInput(query=question, limit=3)).results]
        assert ref in hits, (size, question)
    rng = random.Random(size)
    for query in FOREIGN + [nonsense(rng) for _ in range(10)]:
        result = tools.recall(semantic_svc, alice, RecallInput(query=query))
        assert result.results == [], (size, query, [h.content for h in result.results])
        assert render.text(tools.recall_context(semantic_svc, alice, ContextInput(query=query))) == NO_MATCH, (size, query)


def test_no_co_passengers(semantic_svc, person):
    """Once one memory has evidence for a query, the others sharing nothing with it stay out."""
    alice = person("alice")
    refs = [tools.remember(semantic_svc, alice, RememberInput(content=c)).memory.reference for c in contents(15)]
    for query, ref in [("Cognito", refs[0]), ("auth decision", refs[0]), ("PagerDuty", refs[12])]:
        hits = [h.reference for h in tools.recall(semantic_svc, alice, RecallInput(query=query)).results]
        assert hits == [ref], (query, hits)
        pack = tools.recall_context(semantic_svc, alice, ContextInput(query=query))
        assert [i.reference for i in pack.items] == [ref], query
