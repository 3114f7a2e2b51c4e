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


# Questions about people a small store never heard of, on topics it holds: nothing comes back
# (`relevance.stranger`, at any store size), while the same question about the person the store
# does know still finds the note.
STRANGERS = ["Which editor theme does Bartholomew prefer?", "When did Priscilla deploy to production?",
             "Where does Priscilla keep her configuration?"]


@pytest.mark.parametrize("size", [15, 50])
def test_questions_about_people_the_store_never_heard_of_find_nothing(semantic_svc, person, size):
    alice = person("alice")
    refs = [tools.remember(semantic_svc, alice, RememberInput(content=c)).memory.reference for c in contents(size)]
    for query in STRANGERS:
        result = tools.recall(semantic_svc, alice, RecallInput(query=query))
        assert result.results == [] and result.retrieval_plan["semantic"]["unknown_name"] is True, (size, query, [h.content for h in result.results])
        assert render.text(tools.recall_context(semantic_svc, alice, ContextInput(query=query))) == NO_MATCH, (size, query)
    hits = [h.reference for h in tools.recall(semantic_svc, alice, RecallInput(query="Which editor theme does Alice prefer?", limit=3)).results]
    assert refs[1] in hits, size


# Korean and German notes of a first day, and questions about what none of them concerns, in
# the same languages: two texts of one language lift each other over the background whatever
# they say, so the lift floors let these through; the notes hold nothing of what is asked
# (`evidence.match`).
SAME_SCRIPT = [
    ("배포는 금요일에 하지 않기로 결정했다.", "배포 요일"),
    ("민수님은 편집기에서 다크 모드를 선호한다.", "민수 편집기 선호"),
    ("시범 운영 후 로그 수집 도구로 Fluentd 채택.", "로그 도구 결정"),
    ("Die Datenbank wird jede Nacht um zwei Uhr gesichert.", "Datenbank Sicherung"),
    ("Für die Anmeldung nutzen wir Keycloak, entschieden nach dem Test.", "Anmeldung Entscheidung"),
    ("Vor Änderungen an der Abrechnung: Ticket anlegen und Freigabe von Jonas holen.", "Abrechnung ändern"),
    ("데이터베이스 변경은 지훈님 승인 후 적용한다.", "DB 변경 절차"),
    ("We use Cognito for MCP authentication.", "auth decision"),
]
SAME_SCRIPT_OFF_TOPIC = [
    "자전거 어디서 사", "카약의 역사", "피아노 배우는 법", "김치찌개 끓이는 법", "제주도 날씨 어때", "고양이 사료 추천", "우산 어디서 사",
    "Wo kauft man ein Fahrrad", "Geschichte des Kajaks", "Wie stimmt man eine Gitarre",
]
# Still answered today (docs/retrieval-quality.md, "Limits"): "기타 줄 가는 방법", "수영장 몇 시에 열어", "시금치 요리법".


@pytest.mark.parametrize("size", [5, 8])
def test_off_topic_questions_in_the_notes_language_find_nothing(semantic_svc, person, size):
    alice = person("alice")
    refs = [tools.remember(semantic_svc, alice, RememberInput(content=m)).memory.reference for m, _ in SAME_SCRIPT[:size]]
    for (memory, question), ref in zip(SAME_SCRIPT, refs):
        hits = [h.reference for h in tools.recall(semantic_svc, alice, RecallInput(query=question, limit=3)).results]
        assert ref in hits, (size, question)
    for query in SAME_SCRIPT_OFF_TOPIC:
        result = tools.recall(semantic_svc, alice, RecallInput(query=query))
        assert result.results == [], (size, query, [h.content for h in result.results])
        assert render.text(tools.recall_context(semantic_svc, alice, ContextInput(query=query))) == NO_MATCH, (size, query)


# A small store in four languages, as a generated first day holds them: "app decision" lifts its
# answer under the semantic floor (English over a background mostly English), but well above
# the other memories of the store (`relevance.store_floor`).
MIXED = [
    "L'équipe a retenu Prometheus pour les tests d'intégration après l'essai.",
    "Min-seo님은 코드 저장소 작업에 Okta 선호.",
    "Les changements sur le chiffrement passent par Metabase, après validation de Chloé.",
    "Bruno prefers Memcached for caching.",
    "Changes to payments are applied with Kafka only after Alice signs off.",
    "작업 스케줄링 변경은 Priya님 승인 후 Bitbucket로 적용한다.",
    "푸시 알림에서는 Priya님이 Okta 쓰는 걸 좋아한다.",
    "Farid préfère Gerrit pour les paiements.",
    "Hiro prefers Pulumi for configuration management.",
    "Für die mobile Anwendung arbeitet Greta am liebsten mit Memcached.",
    "시범 운영 후 인증 도구로 Mailgun 채택.",
    "전문 검색 변경은 Dmitri님 승인 후 Airflow로 적용한다.",
    "We decided to use Firebase for the mobile app.",
    "Jonas bevorzugt Stripe für die Job-Planung.",
    "Les changements sur la journalisation passent par Metabase, après validation de Jonas.",
]


def test_answer_that_stands_out_of_a_small_store_is_found(semantic_svc, person):
    alice = person("alice")
    refs = [tools.remember(semantic_svc, alice, RememberInput(content=c)).memory.reference for c in MIXED]
    hits = [h.reference for h in tools.recall(semantic_svc, alice, RecallInput(query="app decision", limit=3)).results]
    assert refs[MIXED.index("We decided to use Firebase for the mobile app.")] in hits
    rng = random.Random(7)
    for query in FOREIGN + [nonsense(rng) for _ in range(10)]:
        assert tools.recall(semantic_svc, alice, RecallInput(query=query)).results == [], query
