"""The ranking profile: every constant that decides what retrieval returns, in one named,
versioned place, with what it was fitted on and by which metric.

Two kinds of constant live here. `RankingSettings` are the defaults of the settings an
operator may override (`config.RetrievalSettings` and `PackingSettings` take their defaults
from here, and `XMEMO_*` variables move them): candidates and pools, fusion weights, the
location-group boost, neighbouring context, the hub discount, the late-interaction leg, the
relevance floors, diversity, the shortest useful cut. `RankingConstants` are fixed in code
(the package's modules read them from here): the late leg's layer and IDF smoothing, the
limits of name and abbreviation evidence, how many candidates a pack asks for per item, the
precision at which two scores tie. No other module of `xmemo.retrieval` defines a number
that changes results (tests/unit/test_ranking_profile.py reads their source to check).

Today's profile was fitted on LoCoMo's dev split (conversations), choosing each constant by
recall@10 and context-pack coverage at 1,500 tokens (`xmemo bench locomo`), except the
evidence cut's (`evidence_*`), fitted on the dev half of `xmemo bench notes` (an agent's
notes) by pack precision, pack recall and the no-answer empty share; the leg weights a
query whose candidates are mostly notes ranks with (`notes_*_weight`, `fusion.leg_weights`),
fitted on the same half by first relevant; and the small-store gates (`match_*`,
`small_evidence_floor`) and the small store's cohort floor (`store_cohort_*`), fitted on `xmemo bench smallstores` (seed 40) by the no-answer reads
left answered and the answers lost, checked on seeds 41 and 42, on a store written apart from
the generator and on the notes dev half. Any change to one of
its values that changes results bumps `version`.

A store records the profile it was created under beside its embedder (`xmemo.pin`), and
`retrieval_plan.profile` names the profile a result was ranked with, and which of its
settings an override moved (`identity`), so a figure, a stored store and an answer can be
tied to the constants that ran."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal


@dataclass(frozen=True)
class RankingSettings:
    """The defaults of the ranking settings (each documented in `config.RetrievalSettings`
    and `config.PackingSettings`, field by field of the same name)."""

    lexical_candidates: int
    semantic_candidates: int
    fusion: Literal["rrf", "minmax"]
    rrf_k: int
    lexical_weight: float
    semantic_weight: float
    group_weight: float
    hub_weight: float
    hub_neighbours: int
    hub_pool: int
    late_weight: float
    notes_semantic_weight: float
    notes_late_weight: float
    late_candidates: int
    late_pool: int
    context_weight: float
    semantic_floor: float
    relevance_floor: float
    unknown_words_floor: float
    unknown_names_floor: float
    abbreviation_floor: float
    store_cohort_margin: float
    store_cohort_floor: float
    evidence_cut: float
    evidence_floor: float
    small_evidence_floor: float
    evidence_coverage_weight: float
    evidence_late_weight: float
    match_floor: float
    match_coverage_weight: float
    diversity_threshold: float
    min_useful_tokens: int

    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self))


@dataclass(frozen=True)
class RankingConstants:
    """The constants fixed in code, no setting to move them."""

    late_layer: int  # the embedder layer whose token states the late leg compares (`late.LAYER`)
    idf_smoothing: float  # BM25's +0.5 in the IDF of a term among the memories scored (`late.pool_idf`: the late leg, the evidence cut)
    pack_candidates_per_item: int  # candidates per leg a pack asks for, per item it may hold (`pipeline`)
    store_cohort_min: int  # lifts a small store's median is taken over, at least (`relevance.store_floor`)
    names_checked: int  # a query's names looked up in the store at most (`relevance.MAX_NAMES`)
    name_short_capitals: int  # a word all in capitals this short or shorter is no name ("I", "OK")
    abbreviation_shortest: int  # a query word shorter than this abbreviates nothing (`relevance.abbreviates`)
    abbreviation_whole: int  # a query word this long counts when a memory holds it whole or compounded
    abbreviation_plural: int  # a query word longer than this and ending in s abbreviates without its s
    initialism_longest: int  # a query word in capitals at most this long may be a memory's initials (`relevance.initialisms`)
    initialism_expansions: int  # spellings of a query's initialisms the read is asked again with, at most (`pipeline._abbreviated`)
    tie_digits: int  # fused scores equal to this many decimals tie (newest first)
    strict_tie_digits: int  # the same for `search_memory`'s lexical scores


@dataclass(frozen=True)
class RankingProfile:
    name: str
    version: int
    fitted_on: str
    metric: str
    settings: RankingSettings
    constants: RankingConstants

    def identity(self, *groups: Any) -> dict[str, Any]:
        """What `retrieval_plan.profile` reports and a store records: name and version, and,
        given the settings groups a read ran with, the ones of this profile's settings an
        override moved off it (`overridden`, only when there are some)."""
        out: dict[str, Any] = {"name": self.name, "version": self.version}
        moved = sorted({n for g in groups for n in self.settings.names() if n in type(g).model_fields and getattr(g, n) != getattr(self.settings, n)})
        if moved:
            out["overridden"] = moved
        return out


PROFILE = RankingProfile(
    name="locomo-recall",
    version=8,  # 2: the evidence cut (`evidence`) and conversations only where the location says so; 3: the notes' leg weights; 4: the small-store gates (`match_floor`, `small_evidence_floor`); 5: the small store's own lifts as the semantic floor's cohort (`store_cohort_*`); 6: initialisms ("PDB" of "Pod disruption budgets") spelled out at any size (`pipeline._abbreviated`); 7: a weak query's lexical hits count when the best holds every term in any inflection (`relevance.holds_every_term`); 8: a name no memory holds empties a weak read at any store size, and capitals in German or title-case queries name nothing (`relevance.stranger`, `relevance.capitals_name_nothing`)
    fitted_on="LoCoMo dev split (conversations); the evidence cut and the notes' leg weights on the dev half of `xmemo bench notes`; the small-store gates and cohort floor on `xmemo bench smallstores` (seed 40)",
    metric="recall@10 and coverage@1500 (LoCoMo); pack precision, pack recall and the no-answer empty share (notes); first relevant (notes' leg weights); off-topic questions answered and answers lost (small stores)",
    settings=RankingSettings(
        lexical_candidates=60,
        semantic_candidates=60,
        fusion="minmax",
        rrf_k=60,
        lexical_weight=1.0,
        semantic_weight=0.7,
        group_weight=0.5,
        hub_weight=1.0,
        hub_neighbours=10,
        hub_pool=4,
        late_weight=0.5,
        notes_semantic_weight=1.25,
        notes_late_weight=1.25,
        late_candidates=60,
        late_pool=120,
        context_weight=0.5,
        semantic_floor=0.07,
        relevance_floor=0.09,
        unknown_words_floor=0.085,
        unknown_names_floor=0.10,
        abbreviation_floor=0.03,
        store_cohort_margin=0.03,
        store_cohort_floor=0.03,
        evidence_cut=0.85,
        evidence_floor=0.18,
        small_evidence_floor=0.135,
        evidence_coverage_weight=0.05,
        evidence_late_weight=0.2,
        match_floor=0.30,
        match_coverage_weight=0.5,
        diversity_threshold=0.95,
        min_useful_tokens=24,
    ),
    constants=RankingConstants(
        late_layer=11,
        idf_smoothing=0.5,
        pack_candidates_per_item=2,
        store_cohort_min=3,
        names_checked=3,
        name_short_capitals=2,
        abbreviation_shortest=3,
        abbreviation_whole=5,
        abbreviation_plural=3,
        initialism_longest=6,
        initialism_expansions=3,
        tie_digits=12,
        strict_tie_digits=9,
    ),
)
