"""The evidence cut: `recall` and `recall_context` keep a candidate only when its own evidence
for the query is close to the best candidate's, and return nothing when even the best
candidate's evidence is weak.

Fused scores say how a candidate ranks among the others (min-max scaled per query), not how
much it has to do with the query, so a fixed count of them ("top `max_items` that pass a
floor") packs unrelated notes after the one that answers. A candidate's own evidence is
what it alone scores: its lift (cosine above the query's background, `relevance`), the
share of the query's terms it holds (each weighted by its IDF among the candidates examined,
so a rare word asked counts more than a common one), and its late-interaction score
(`late`). The cut is relative to each query's best (`keeps`), plus two absolute gates: a
question about nothing stored has no candidate with real evidence, whatever its fused rank.
- `evidence_floor`, on that evidence: the best note's must reach it in a crowded store (the
  caller sees at least `semantic_candidates` memories), `small_evidence_floor` (lower) in a
  smaller one, where a paraphrase's evidence is weaker and chance lifts fewer notes (only
  when the late leg scored the notes: the floor was fitted with their late scores in it);
- `match_floor`, at any size, on how much of the query the best note holds itself (`match`:
  its late-interaction score plus half the IDF share of the query's terms it holds).
Both are needed in small stores: two texts of one language or script lift each other over
the background whatever they say ("카약의 역사", the history of the kayak, lifts a Korean
note about a logging tool as much as a real Korean paraphrase does), and token matching
has the same bias, less. Neither alone separates off-topic questions from paraphrases; each
removes leaks the other lets through (bench-out/smallstores/measures/report.md). A note a
query word abbreviates ("auth" of "authentication", `relevance.abbreviates`) is evidence
enough: it holds no term of the query and little of its tokens.

Only the head of the ranking is examined: as many candidates as the read returns at most
(`recall`'s limit, `recall_context`'s `max_items`), so with partial candidates (OpenSearch
gives no content, `Candidates.partial`) the cut fetches no record the read would not fetch
anyway (`pipeline.Records`), and the cut only ever takes away from what would be returned. A conversation's turns (`records.has_context`) are not cut:
a reply's evidence is its conversation's ("Yes, twice." answers "Have you been to Lisbon?"),
which the neighbouring context and the group boost already carry. Without a semantic leg
(no embedder, or a cluster without k-NN) nothing is cut: its constants were fitted on lift
and late scores, and term shares alone are too weak a measure."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from .. import text
from ..config import RetrievalSettings
from ..store.records import has_context
from .fusion import Ranked


def coverage(query: str, contents: Sequence[str]) -> list[float]:
    """For each of `contents`, the share of the query's tolerant terms it holds, each term
    weighted by its IDF over `contents` (the candidates examined: no store statistics, so both
    stores count alike)."""
    terms = set(text.query_terms(query, strict=False))
    held = [_stems(c) for c in contents]
    if not terms or not held:
        return [0.0] * len(held)
    n = len(held)
    from .late import pool_idf  # numpy: loaded once a read with an embedder gets here, as the late leg does

    weights = {t: float(pool_idf(n, sum(t in h for h in held))) for t in terms}
    total = sum(weights.values())
    if total <= 0:
        return [0.0] * n
    return [sum(w for t, w in weights.items() if t in h) / total for h in held]


@lru_cache(maxsize=4096)
def _stems(content: str) -> frozenset[str]:
    return frozenset(text.stems(content))


def score(lift: float | None, covered: float, late: float | None, coverage_weight: float, late_weight: float) -> float:
    """A candidate's own evidence: its lift, plus the weighted term share and late score (a leg
    that did not score it adds nothing)."""
    return (lift or 0.0) + coverage_weight * covered + late_weight * (late or 0.0)


def match(covered: float, late: float | None, coverage_weight: float) -> float | None:
    """How much of the query a note holds itself: its late-interaction score plus
    `coverage_weight` x its IDF share of the query's terms; None when the late leg did not
    score it (no stored token states), so a note is never gated for a leg that did not run."""
    return None if late is None else late + coverage_weight * covered


def keeps(evidences: Sequence[float], cut: float) -> list[bool]:
    """Which candidates have evidence at least `cut` x the best one's. The best is always kept;
    `cut` 0, or a best without positive evidence, keeps every candidate."""
    if cut <= 0 or not evidences:
        return [True] * len(evidences)
    best = max(evidences)
    if best <= 0:
        return [True] * len(evidences)
    return [e >= cut * best for e in evidences]


def is_turn(r: Ranked) -> bool:
    """A memory of a conversation (`records.has_context`): its location says so."""
    return has_context(r.memory.location, r.memory.bucket)


def cut(
    query: str,
    ranked: list[Ranked],
    whole: Callable[[list[Ranked]], list[Ranked]],
    lifts: Mapping[str, float],
    late: Mapping[str, float],
    s: RetrievalSettings,
    head: int,
    crowded: bool,
    abbreviated: frozenset[str] = frozenset(),
) -> tuple[list[Ranked], dict[str, Any]]:
    """The candidates of `ranked` the evidence keeps, in rank order, and what the cut did (for
    `retrieval_plan.cut`). `whole` makes the first `head` candidates whole (their content is
    read); `lifts` and `late` are the legs' own scores by reference. Past the head only turns
    remain (a pack of notes stops within it). Turns are not cut. A ranking that holds no
    turn and none of the `abbreviated` notes is emptied when its best examined note's
    evidence is below `evidence_floor` (the store `crowded`: the caller sees at least
    `semantic_candidates` memories, as for `relevance.semantic_floor_for`) or
    `small_evidence_floor` (a smaller store), or its best `match` below `match_floor`;
    `by` says which gate emptied it. Without a
    semantic leg (`lifts` empty) nothing is cut: as in `relevance.lexical_trusted`, shared
    words are then the only evidence there is, and cutting on them alone cost the notes
    bench 0.16 of pack recall (dev half, `--embedder none`)."""
    plan: dict[str, Any] = {"relative": s.evidence_cut, "floor": s.evidence_floor if crowded else s.small_evidence_floor, "match_floor": s.match_floor, "head": head}
    if not lifts:  # no semantic leg: the evidence the cut was fitted on is missing (see the module's doc)
        return ranked, {**plan, "used": False, "reason": "no semantic leg"}
    if not ranked or (s.evidence_cut <= 0 and max(s.evidence_floor, s.small_evidence_floor, s.match_floor) <= -1):
        return ranked, {**plan, "used": False}
    examined = whole(ranked[:head])
    notes = [r for r in examined if not is_turn(r)]
    covered = coverage(query, [r.memory.content for r in notes])
    evidence = {
        r.memory.reference: score(lifts.get(r.memory.reference), c, late.get(r.memory.reference), s.evidence_coverage_weight, s.evidence_late_weight)
        for r, c in zip(notes, covered)
    }
    best = max(evidence.values(), default=None)
    matched = [m for r, c in zip(notes, covered) if (m := match(c, late.get(r.memory.reference), s.match_coverage_weight)) is not None]
    best_match = max(matched, default=None)
    turns = len(examined) - len(notes)
    floor = s.evidence_floor if crowded else s.small_evidence_floor
    # the small-store floor was fitted with late scores in the evidence: without them (an
    # embedder without token states) it would stand for a lift floor twice the semantic one
    weak = best is not None and best < floor and (crowded or best_match is not None)
    unmatched = best_match is not None and best_match < s.match_floor
    if (weak or unmatched) and not turns and not any(r.memory.reference in abbreviated for r in notes):
        # nothing matched (SPEC §5's empty answer), so nothing counts as dropped
        gate = {"best": round(best, 4), **({"match": round(best_match, 4)} if best_match is not None else {})}
        return [], {**plan, "used": True, **gate, "kept": 0, "gated": len(ranked), "by": ("evidence_floor" if crowded else "small_evidence_floor") if weak else "match_floor"}
    passed = dict(zip(evidence, keeps(list(evidence.values()), s.evidence_cut)))
    kept = [r for r in examined if passed.get(r.memory.reference, True)]
    kept += [r for r in ranked[head:] if is_turn(r)]
    out = {**plan, "used": True, "kept": len(kept), "dropped": len(ranked) - len(kept), "turns": turns}
    if best is not None:
        out["best"] = round(best, 4)
    if best_match is not None:
        out["match"] = round(best_match, 4)
    return kept, out
