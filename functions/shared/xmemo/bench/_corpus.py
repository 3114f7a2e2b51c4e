"""Deterministic synthetic memories and queries in English, French and Korean, for the
latency and load benchmarks (the quality benchmark uses real data instead)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache

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
    location: str | None = None  # None: the bucket (no neighbouring context)
    base: int = 0


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


# -- a corpus with a realistic vocabulary: LoCoMo's turns, varied to any size ------------
NAMES = ["Aisha", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Jamal", "Keiko", "Luca",
         "Maya", "Nikolai", "Olga", "Pedro", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Victor", "Wen", "Ximena",
         "Yusuf", "Zoe", "Amara", "Bilal", "Carmen", "Dmitri", "Elena", "Felix", "Greta", "Hugo", "Ines", "Jonas",
         "Kavya", "Leon", "Mina", "Noah", "Omar", "Priya", "Rafael", "Sara", "Tomas", "Vera", "Wanda", "Yara"]


@dataclass(frozen=True)
class Corpus:
    """Memories to store, queries to time, and the distinct texts whose vectors stand in for
    the memories' (`base_of[i]` is memory i's): embedding every memory would take hours."""

    memories: list[SyntheticMemory]
    queries: list[str]
    bases: list[str]
    base_of: list[int]


def synthetic(n: int, n_queries: int, distinct: int) -> Corpus:
    """The small-vocabulary multilingual corpus above (any-term queries match a large share)."""
    ms = memories(n)
    distinct = min(distinct, n)
    return Corpus(ms, queries(n_queries), [m.content for m in ms[:distinct]], [i % distinct for i in range(n)])


def locomo(n: int, n_queries: int, data: str, seed: int = 1) -> Corpus:
    """LoCoMo's turns (real conversational English, ~7k distinct words), copied until `n`:
    copy c renames the two speakers and appends the first clause of another turn, so each
    memory is distinct and term frequencies stay those of real text. Memories are stored
    in their bucket, not in named sessions: with sessions, each bulk insert also rewrites
    its neighbours' context column, and ingest fell to ~60 rows/s past 50k rows here,
    too slow to build 1M. Queries are LoCoMo's questions, their names moved to a random
    copy's."""
    from .locomo.data import load

    rng = random.Random(seed)
    convs = load(data)
    turns = [(c.name, t) for c in convs for t in c.turns]
    speakers = {c.name: sorted({t.content.split(":", 1)[0] for t in c.turns}) for c in convs}
    bases = [t.content for _, t in turns]
    out: list[SyntheticMemory] = []
    seen: set[str] = set()
    copies = -(-n // len(turns))
    renames = [_renaming(rng) for _ in range(copies)]
    i = 0
    while len(out) < n:
        copy, j = divmod(i, len(turns))
        conv, turn = turns[j]
        own = _renamed(turn.content, speakers[conv], renames[copy]) if copy else turn.content
        content = own
        while content in seen or (copy and content == own):
            clause = re.split(r"(?<=[.!?,;])\s", turns[rng.randrange(len(turns))][1].content.split(": ", 1)[-1])[0]
            content = f"{own} {clause}"
        seen.add(content)
        out.append(SyntheticMemory(content, rng.choice(TYPES), f"proj-{copy % 20}", "conversations", (), None, j))
        i += 1
    questions = [q.text for c in convs for q in c.questions]
    qs = []
    for _ in range(n_queries):
        q = rng.choice(questions)
        conv = next(c.name for c in convs if any(x.text == q for x in c.questions))
        copy = rng.randrange(copies)
        qs.append(_renamed(q, speakers[conv], renames[copy]) if copy else q)
    return Corpus(out, qs, bases, [m.base for m in out])


def _renaming(rng: random.Random) -> tuple[str, str]:
    a, b = rng.sample(NAMES, 2)
    return a, b


def _renamed(s: str, speakers: list[str], names: tuple[str, str]) -> str:
    new = dict(zip(speakers, names))
    return _speakers_pattern(tuple(speakers)).sub(lambda m: new[m.group(0)], s)


@lru_cache(maxsize=64)
def _speakers_pattern(speakers: tuple[str, ...]) -> re.Pattern:
    return re.compile(r"\b(?:" + "|".join(re.escape(x) for x in speakers) + r")\b")
