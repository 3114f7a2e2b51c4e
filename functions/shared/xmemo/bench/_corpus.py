"""Deterministic synthetic memories and queries in English, French and Korean, for the
latency and load benchmarks (the quality benchmark uses real data instead)."""

from __future__ import annotations

import random
from dataclasses import dataclass

SUBJECTS_EN = ["the billing service", "our staging cluster", "the auth gateway", "the search index", "the mobile app",
               "the data pipeline", "the release train", "the on-call rotation", "the design system", "the payments API",
               "the nightly export", "the feature flag service", "the metrics dashboard", "the CI runners", "the cache layer"]
VERBS_EN = ["moved to", "now depends on", "was rewritten in", "must not call", "is monitored by", "will migrate to",
            "was rolled back from", "shares credentials with", "is owned by", "is rate limited by"]
OBJECTS_EN = ["PostgreSQL 16", "Redis 7", "OpenSearch 2.13", "a Rust worker", "team platform", "Cognito", "Kafka",
              "the EU region", "Terraform modules", "gRPC", "a weekly cron", "S3 lifecycle rules", "Datadog", "GraphQL"]
REASONS_EN = ["because latency doubled last quarter", "after the March incident", "to cut costs by a third",
              "as agreed in the architecture review", "until the vendor fixes the bug", "for GDPR compliance",
              "so that agents can resume work across sessions", "per the security audit"]
SUBJECTS_FR = ["le service de facturation", "la passerelle d'authentification", "l'index de recherche", "l'application mobile",
               "le pipeline de données", "le tableau de bord", "la file d'attente", "le module de paiement"]
VERBS_FR = ["utilise désormais", "a migré vers", "ne doit plus appeler", "dépend de", "sera remplacé par"]
OBJECTS_FR = ["PostgreSQL", "une file Kafka", "l'authentification OAuth", "la région européenne", "un cache Redis",
              "une décision d'architecture", "le nouveau fournisseur"]
SUBJECTS_KO = ["결제 서비스는", "인증 게이트웨이는", "검색 색인은", "모바일 앱은", "데이터 파이프라인은", "배포 작업은"]
OBJECTS_KO = ["PostgreSQL을", "새 캐시를", "유럽 리전을", "카프카 큐를", "보안 감사 결과를", "작업을 계속하는 방법을"]
VERBS_KO = ["사용한다", "이전했다", "검토했다", "기록했다", "대체할 예정이다"]
TYPES = ["fact", "decision", "preference", "procedure", "note", "event", "summary"]


@dataclass(frozen=True)
class SyntheticMemory:
    content: str
    type: str
    project: str
    bucket: str
    tags: tuple[str, ...]


def _sentence(rng: random.Random) -> str:
    lang = rng.random()
    if lang < 0.7:
        return f"{rng.choice(SUBJECTS_EN).capitalize()} {rng.choice(VERBS_EN)} {rng.choice(OBJECTS_EN)} {rng.choice(REASONS_EN)}."
    if lang < 0.85:
        return f"{rng.choice(SUBJECTS_FR).capitalize()} {rng.choice(VERBS_FR)} {rng.choice(OBJECTS_FR)}."
    return f"{rng.choice(SUBJECTS_KO)} {rng.choice(OBJECTS_KO)} {rng.choice(VERBS_KO)}."


def memories(n: int, seed: int = 1) -> list[SyntheticMemory]:
    """`n` distinct memories (a serial number keeps every content unique)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        body = " ".join(_sentence(rng) for _ in range(rng.randint(1, 3)))
        out.append(
            SyntheticMemory(
                content=f"{body} (ticket OPS-{i})",
                type=rng.choice(TYPES),
                project=f"proj-{rng.randrange(20)}",
                bucket=f"bucket-{rng.randrange(5)}",
                tags=tuple(sorted({f"t{rng.randrange(30)}" for _ in range(rng.randint(0, 3))})),
            )
        )
    return out


def queries(n: int, seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    shapes = [
        lambda: f"what does {rng.choice(SUBJECTS_EN)} depend on",
        lambda: f"why did we move to {rng.choice(OBJECTS_EN)}",
        lambda: f"{rng.choice(SUBJECTS_EN)} {rng.choice(OBJECTS_EN)}",
        lambda: f"décision sur {rng.choice(SUBJECTS_FR)}",
        lambda: f"{rng.choice(SUBJECTS_KO)} {rng.choice(OBJECTS_KO)}",
        lambda: f"incident {rng.choice(REASONS_EN)}",
    ]
    return [rng.choice(shapes)() for _ in range(n)]
