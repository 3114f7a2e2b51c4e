"""From store candidates to a ranked list: one fusion for every store, a relevance floor,
recency as the tie-breaker, and diversity for context packs."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Literal

from .. import text
from ..config import RetrievalSettings
from ..models import Memory
from .profile import PROFILE
from ..store.base import Candidates, Hit
from ..store.records import context_group, has_context

TIE_DIGITS = PROFILE.constants.tie_digits  # scores equal to this many decimals tie: the newer memory first


@dataclass
class Ranked:
    memory: Memory
    score: float
    lexical_rank: int | None = None
    semantic_rank: int | None = None
    cosine: float | None = None


@dataclass
class Plan:
    """What retrieval did, reported as the pack's `retrieval_plan`: first the ranking profile
    it ran with (`RankingProfile.identity`, with the settings an override moved off it)."""

    profile: dict[str, Any] = field(default_factory=PROFILE.identity)
    lexical: dict[str, Any] = field(default_factory=dict)
    semantic: dict[str, Any] = field(default_factory=dict)
    fusion: dict[str, Any] = field(default_factory=dict)
    filters: dict[str, Any] = field(default_factory=dict)
    diversity: dict[str, Any] = field(default_factory=dict)
    relevance: dict[str, Any] = field(default_factory=dict)
    late: dict[str, Any] = field(default_factory=dict)
    cut: dict[str, Any] = field(default_factory=dict)  # the evidence cut (`xmemo.retrieval.evidence`)

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "lexical": self.lexical,
            "semantic": self.semantic,
            "fusion": self.fusion,
            "filters": self.filters,
            "diversity": self.diversity,
            "relevance": self.relevance,
            **({"late": self.late} if self.late else {}),
            **({"cut": self.cut} if self.cut else {}),
        }


@dataclass(frozen=True)
class LegWeights:
    """The weights one query fuses its legs with, and what its candidates were."""

    candidates: Literal["notes", "conversation"]
    semantic: float
    late: float

    def plan(self, lexical: float) -> dict[str, Any]:
        return {"candidates": self.candidates, "lexical": lexical, "semantic": self.semantic, "late": self.late}


def leg_weights(places: Iterable[tuple[str, str]], settings: RetrievalSettings) -> LegWeights:
    """`notes_*_weight` when most of a query's candidates (`places`: the location and bucket of
    every hit either leg fetched, `Hit.place`) are notes, the conversation weights (`semantic_weight`, `late_weight`) when
    most are a conversation's turns (`records.has_context`). The conversation weights were
    fitted on LoCoMo, where a question's words are often in a turn next to the answer; in a
    store of notes the answer is one note whose own meaning has to match, and the semantic
    and late legs say more about that than shared words do (first relevant on the dev half of
    `xmemo bench notes`, docs/research/README.md, "Leg weights"). A tie counts as a
    conversation, as every store ranked before there were two sets of weights."""
    turns = notes = 0
    for location, bucket in places:
        if has_context(location, bucket):
            turns += 1
        else:
            notes += 1
    if notes > turns:
        return LegWeights("notes", settings.notes_semantic_weight, settings.notes_late_weight)
    return LegWeights("conversation", settings.semantic_weight, settings.late_weight)


def discount_hubs(hits: list[Hit], keep: int, weight: float, neighbours: int) -> tuple[list[Hit], dict[str, float]]:
    """The semantic leg's `keep` best hits once each is discounted by how close it sits to
    everything: `weight` × the mean cosine of its `neighbours` nearest among the fetched
    hits, and those discounted scores by reference. A hub (a generic turn, "That's great!",
    near every query in embedding space) no longer crowds out a memory that is near this
    query alone: the CSLS correction of cross-lingual word retrieval (Conneau et al., 2018),
    with the fetched pool standing in for the store's neighbourhood. The raw cosines stay
    on the hits, so the relevance floors (`xmemo.retrieval.relevance`) judge what they judged
    before. Hits without a vector, or `weight` 0, keep their order and scores."""
    if weight <= 0 or len(hits) < 2 or any(h.vector is None for h in hits):
        return hits[:keep], {h.memory.reference: h.score for h in hits[:keep]}
    near = hubness([h.vector for h in hits], neighbours)
    discounted = [h.score - weight * float(x) for h, x in zip(hits, near)]
    order = sorted(range(len(hits)), key=lambda i: -discounted[i])[:keep]  # stable: equal scores keep the store's order
    return [hits[i] for i in order], {hits[i].memory.reference: discounted[i] for i in order}


def hubness(vectors: Any, neighbours: int) -> Any:
    """Each vector's mean cosine to its `neighbours` nearest among the others (at least two
    vectors): how close it sits to everything around it."""
    import numpy as np

    unit = np.asarray(vectors, dtype=np.float32)
    unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    near = unit @ unit.T
    np.fill_diagonal(near, -np.inf)
    k = min(neighbours, len(unit) - 1)
    return np.partition(near, near.shape[1] - k, axis=1)[:, -k:].mean(axis=1)


def fuse(
    cands: Candidates,
    settings: RetrievalSettings,
    baseline: float = 0.0,
    lexical_trusted: bool = True,
    floor: float | None = None,
    semantic_scores: dict[str, float] | None = None,
    abbreviated: frozenset[str] = frozenset(),
    semantic_weight: float | None = None,
) -> list[Ranked]:
    """Both legs fused into one ranking (`settings.fusion`). A hit counts on semantic
    evidence when its cosine clears `semantic_floor` above `baseline` (the query's cosine
    to unrelated text, `xmemo.retrieval.relevance`); a hit the lexical leg found counts on its own
    only when `lexical_trusted`. So unrelated memories are not returned, and a query
    about nothing stored gets nothing. `floor` replaces `semantic_floor` for this query
    (`relevance.semantic_floor_for`). `semantic_scores` (by reference) are what the
    semantic leg's hits weigh in fusion instead of their cosines (`discount_hubs`).
    The hits in `abbreviated` (by reference; a query word abbreviates one of theirs,
    `relevance.abbreviates`) count from `abbreviation_floor`, if lower than `floor`.
    `semantic_weight` replaces the setting's for this query (`leg_weights`)."""
    floor = settings.semantic_floor if floor is None else floor
    semantic_weight = settings.semantic_weight if semantic_weight is None else semantic_weight
    lift = {h.memory.reference: h.score - baseline for h in cands.semantic}
    lexical = [h for h in cands.lexical if lexical_trusted or lift.get(h.memory.reference, -math.inf) >= floor]
    by_ref: dict[str, Ranked] = {}
    for rank, hit in enumerate(lexical, 1):
        r = by_ref.setdefault(hit.memory.reference, Ranked(hit.memory, 0.0))
        r.lexical_rank = rank
    for rank, hit in enumerate(cands.semantic, 1):
        r = by_ref.get(hit.memory.reference)
        if r is None:
            needed = min(floor, settings.abbreviation_floor) if hit.memory.reference in abbreviated else floor
            if hit.score - baseline < needed:
                continue
            r = by_ref[hit.memory.reference] = Ranked(hit.memory, 0.0)
        r.semantic_rank = rank
        r.cosine = hit.score
    if settings.fusion == "rrf":
        k = settings.rrf_k
        for r in by_ref.values():
            if r.lexical_rank is not None:
                r.score += settings.lexical_weight / (k + r.lexical_rank)
            if r.semantic_rank is not None:
                r.score += semantic_weight / (k + r.semantic_rank)
    else:
        _add_scaled(by_ref, lexical, settings.lexical_weight)
        _add_scaled(by_ref, cands.semantic, semantic_weight, semantic_scores)
    return sorted(by_ref.values(), key=lambda r: (-round(r.score, TIE_DIGITS), -r.memory.created_at.timestamp()))


def _add_scaled(by_ref: dict[str, Ranked], hits: list, weight: float, scores: dict[str, float] | None = None) -> None:
    """Min-max scaling of one leg's scores (`scores` by reference, else the hits' own) to
    0..1 within this query's candidates, so BM25 (unbounded) and cosine (compressed near
    0.8 for e5) weigh what their weights say."""
    if not hits:
        return
    values = [h.score if scores is None else scores[h.memory.reference] for h in hits]
    top, low = max(values), min(values)
    span = top - low
    for h, value in zip(hits, values):
        r = by_ref.get(h.memory.reference)
        if r is not None:
            r.score += weight * ((value - low) / span if span > 0 else 1.0)


def boost_groups(ranked: list[Ranked], weight: float) -> list[Ranked]:
    """Each memory gains `weight` × the best fused score in its context group (same holder,
    location and temporariness: one conversation or document), relative to the query's best,
    then the list is re-ranked. An answer is often a short turn in the conversation that holds
    the query's strongest hits; a memory without a group is its own (gains weight × its own
    score), so grouped memories are not favoured for being grouped. Only re-ranks: what is
    returned was decided by `fuse`."""
    if weight <= 0 or not ranked:
        return ranked
    top = max(r.score for r in ranked)
    if top <= 0:
        return ranked
    best: dict[Any, float] = {}
    keys = [context_group(r.memory) or r.memory.reference for r in ranked]
    for key, r in zip(keys, ranked):
        best[key] = max(best.get(key, r.score), r.score)
    for key, r in zip(keys, ranked):
        r.score += weight * best[key] / top
    return sorted(ranked, key=lambda r: (-round(r.score, TIE_DIGITS), -r.memory.created_at.timestamp()))


def add_late_leg(ranked: list[Ranked], pool: list[Memory], scores: Any, weight: float, keep: int) -> list[Ranked]:
    """The late-interaction leg (`late.pool_scores` of each `pool` memory, in `scores`) joined
    to a ranking: its `keep` best gain `weight` × the ranking's best score × their score
    less the (`keep`+1)-th best, relative to the best (so the scale starts where the leg's
    candidates end, as min-max over them does), and join the ranking if not in it. Only a
    ranking that is not empty: a query answered with nothing stays so (`xmemo.retrieval.relevance`).
    A pool of at most `keep` memories has no (`keep`+1)-th score to say what chance scores,
    so there the leg only re-ranks what the ranking holds: a memory joins only on evidence
    of its own, not because another passed for this query."""
    import numpy as np

    if weight <= 0 or not ranked or not len(pool):
        return ranked
    s = np.asarray(scores, dtype=np.float64)
    by_ref = {r.memory.reference: r for r in ranked}
    if len(s) <= keep:
        s = np.where([m.reference in by_ref for m in pool], s - s.min() + 1e-9, 0.0)
    else:
        s = np.maximum(s - np.sort(s)[-(keep + 1)], 0.0)
    if s.max() <= 0:
        return ranked
    top = max(r.score for r in ranked)
    for i in np.argsort(-s, kind="stable")[:keep]:
        if s[i] <= 0:
            break
        memory = pool[int(i)]
        r = by_ref.get(memory.reference)
        if r is None:
            r = by_ref[memory.reference] = Ranked(memory, 0.0)
        r.score += weight * top * float(s[i] / s.max())
    return sorted(by_ref.values(), key=lambda r: (-round(r.score, TIE_DIGITS), -r.memory.created_at.timestamp()))


def lexical_only(cands: Candidates) -> list[Ranked]:
    """Strict ranking: lexical score, then recency."""
    ranked = [Ranked(h.memory, h.score, lexical_rank=i) for i, h in enumerate(cands.lexical, 1)]
    return sorted(ranked, key=lambda r: (-round(r.score, PROFILE.constants.strict_tie_digits), -r.memory.created_at.timestamp()))


class NearDuplicates:
    """Asked in rank order, keeps a content unless its words nearly repeat one kept earlier
    (Jaccard ≥ threshold); counts the ones it skips. Asked one at a time, so a pack stops
    asking once full (about 10 of 120 candidates for the default 8 items). Kept sets are
    grouped by size and only sizes `_near` does not rule out are compared: every candidate
    against every kept one was ~5 ms of a 100-candidate pack."""

    def __init__(self, threshold: float):
        self.threshold = threshold
        self.skipped = 0
        self._seen: dict[int, list[frozenset[str]]] = {}

    def keeps(self, content: str) -> bool:
        terms, seen = word_set(content), self._seen
        if any(_near(terms, s, self.threshold) for size in _sizes_within(len(terms), self.threshold, seen) for s in seen[size]):
            self.skipped += 1
            return False
        seen.setdefault(len(terms), []).append(terms)
        return True


def _sizes_within(size: int, threshold: float, seen: dict[int, list]) -> list[int]:
    """The sizes in `seen` whose sets `_near` might find near a set of `size`: it rules out
    a pair whose smaller size is below `threshold` × the larger, and the range kept here
    is wider than that by 2 on each side (so rounding never drops a pair it would keep)."""
    if not 0 < threshold <= 1:
        return list(seen)
    low, high = int(threshold * size) - 2, int(size / threshold) + 2
    if high - low <= len(seen):
        return [n for n in range(max(low, 0), high + 1) if n in seen]
    return [n for n in seen if low <= n <= high]


@lru_cache(maxsize=2048)
def word_set(content: str) -> frozenset[str]:
    """The distinct words of a memory's content. Cached (about 7 MB when full): a warm function
    sees the same memories again and again, and tokenizing is most of what diversity costs."""
    return frozenset(text.words(content))


def _near(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    """Jaccard(a, b) ≥ threshold; sets whose sizes alone rule it out are not intersected."""
    if not a and not b:
        return 1.0 >= threshold
    small, large = sorted((len(a), len(b)))
    if small < threshold * large:  # |a ∩ b| ≤ small and |a ∪ b| ≥ large
        return False
    common = len(a & b)
    return common / (len(a) + len(b) - common) >= threshold
