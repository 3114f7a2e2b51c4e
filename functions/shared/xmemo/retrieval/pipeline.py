"""The one way a read retrieves: `retrieve` takes a query, the caller's read filter and a
store (`MemoryStore`, whichever backs the service) and gives the ranked candidates, the
plan of what was done and the records behind them. `recall` and `recall_context` ask it
tolerantly (both legs fused, nothing when nothing is relevant enough), `search_memory`
strictly (every term, lexical score then recency); `recall_context` then keeps a diverse
pack of what it gave (`pack_context`). The tools keep the scope checks, the read filters
and the result building; nothing else here reaches a store."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from .. import render, text
from ..embedding import Embedder, QueryTokens, query_embedding
from ..models import Memory
from ..packing import Pack, pack
from . import evidence, relevance
from .profile import PROFILE
from .fusion import NearDuplicates, Plan, Ranked, add_late_leg, boost_groups, discount_hubs, fuse, leg_weights, lexical_only

if TYPE_CHECKING:
    from ..auth import ReadFilter
    from ..config import PackingSettings, RetrievalSettings
    from ..store.base import Candidates, MemoryStore


class Records:
    """The whole records of ranked candidates a store gave as `Candidates.partial` (only what
    ranking reads): fetched for those a read returns, a page at a time, each once; a
    candidate forgotten since the search is left out. With whole candidates, a no-op."""

    def __init__(self, store: MemoryStore, rf: ReadFilter, partial: bool):
        self.store, self.rf, self.partial = store, rf, partial
        self.known: dict[str, Memory] = {}

    def fetch(self, references: list[str], *, states: bool = False) -> dict[str, Memory]:
        """Whole records (with token states when `states`) of `references`, kept for `fill`."""
        got = self.store.memories(references, self.rf, states=states)
        self.known.update(got)
        return got

    def fill(self, ranked: list[Ranked]) -> list[Ranked]:
        if not self.partial:
            return ranked
        missing = [r.memory.reference for r in ranked if r.memory.reference not in self.known]
        if missing:
            self.fetch(missing)
        out = []
        for r in ranked:
            memory = self.known.get(r.memory.reference)
            if memory is not None:
                r.memory = memory.model_copy(update={"token_states": None}) if memory.token_states is not None else memory
                out.append(r)
        return out

    def pages(self, ranked: list[Ranked], size: int) -> Iterator[Ranked]:
        """`ranked` whole, in order, fetched `size` at a time as the caller asks for more."""
        for start in range(0, len(ranked), max(size, 1)):
            yield from self.fill(ranked[start : start + size])

    def first(self, ranked: list[Ranked], n: int) -> list[Ranked]:
        return list(islice(self.pages(ranked, n), n))


@dataclass
class Retrieved:
    """What one read retrieved: the ranking (its memories may be partial), the plan of what
    was done, and the records that make the returned ones whole."""

    ranked: list[Ranked]
    plan: Plan
    records: Records

    def first(self, n: int) -> list[Ranked]:
        """The best `n`, whole."""
        return self.records.first(self.ranked, n)


def retrieve(
    store: MemoryStore,
    embedder: Embedder | None,
    settings: RetrievalSettings,
    query: str,
    rf: ReadFilter,
    *,
    caller: str = "",
    strict: bool = False,
    wanted: int = 0,
    head: int = 0,
) -> Retrieved:
    """The entry point of every read that ranks. Tolerant: each leg keeps its setting's
    number of candidates, or `wanted` if more (a large pack), and the evidence cut examines
    the first `head` (what the read returns at most, `evidence.cut`). Strict (`search_memory`):
    `wanted` hits that hold every query term, no semantic leg. `caller` scopes the query
    embedding cache (`embedding.query_embedding`)."""
    if strict:
        cands = store.search(query, None, rf, lexical_k=wanted, semantic_k=0, strict=True)
        plan = Plan(PROFILE.identity(settings), lexical={"mode": "all-terms", "candidates": len(cands.lexical)}, semantic={"used": False})
        return Retrieved(lexical_only(cands)[:wanted], plan, Records(store, rf, cands.partial))
    return _tolerant(store, embedder, settings, query, rf, caller, wanted, head)


def _tolerant(
    store: MemoryStore, embedder: Embedder | None, s: RetrievalSettings, query: str, rf: ReadFilter, caller: str, wanted: int, head: int,
    spelled_out: tuple[frozenset[str], frozenset[str]] | None = None,
) -> Retrieved:
    """Both legs, fused, and nothing when nothing is relevant enough (`relevance`). The
    semantic leg fetches `hub_pool` times its candidates and keeps the best once hubs are
    discounted. A query with an initialism its hits spell ("PDB" of "Pod disruption
    budgets", `_abbreviated`) is asked once more with those words beside it, so every leg
    and the evidence cut see what the asker meant: the embedding model lifts "PDB" little
    and no lexical leg finds it. That second read gets the first one's abbreviated hits and
    spelled initialisms (`spelled_out`) rather than looking for them again."""
    vector, tokens = query_embedding(embedder, query, caller) if embedder is not None else (None, None)
    semantic_k = max(s.semantic_candidates, wanted)
    pool = semantic_k * s.hub_pool if s.hub_weight > 0 else semantic_k
    cands = store.search(query, vector, rf, lexical_k=max(s.lexical_candidates, wanted), semantic_k=pool, strict=False)
    whole = Records(store, rf, cands.partial)
    crowded = len(cands.semantic) >= s.semantic_candidates

    def held(words: str) -> bool:  # one memory holds every one of them (one strict lexical look)
        return bool(store.search(words, None, rf, lexical_k=1, semantic_k=0, strict=True).lexical)

    if spelled_out is None:
        abbreviated, spelled, expansion = _abbreviated(query, cands, whole, crowded, held)
        if expansion:  # ask again with the words a typed initialism stands for here
            got = _tolerant(store, embedder, s, f"{query} ({'; '.join(expansion)})", rf, caller, wanted, head, (abbreviated, spelled))
            got.plan.lexical["initialisms"] = expansion
            return got
    else:
        abbreviated, spelled = spelled_out
    base = relevance.baseline(embedder, vector) if vector is not None else 0.0
    top_lift = max(h.score for h in cands.semantic) - base if cands.semantic else None
    every_term = False
    if top_lift is not None and top_lift < s.relevance_floor:  # only weak queries pay for this look
        every_term = held(query) or _best_holds_every_term(query, cands, whole)
    trusted = relevance.lexical_trusted(top_lift, every_term, s.relevance_floor)
    words_known, fetched = bool(cands.lexical), len(cands.semantic)
    floor = relevance.semantic_floor_for(words_known, top_lift, crowded, s.semantic_floor, s.unknown_words_floor)
    stranger = relevance.stranger(top_lift, s.unknown_names_floor, lambda name: text.fold(name) not in spelled and not held(name), query)
    if stranger:  # a name no memory holds, and no hit strong enough to answer anyway
        cands.lexical, cands.semantic = [], []
    fetched_hits = list({h.reference: h for h in (*cands.lexical, *cands.semantic)}.values())  # before the discount keeps fewer
    lifts = {h.reference: h.score - base for h in cands.semantic}  # every fetched hit's, for the evidence cut
    floor = relevance.store_floor(floor, words_known, crowded, lifts.values(), s.store_cohort_margin, s.store_cohort_floor)
    cands.semantic, semantic_scores = discount_hubs(cands.semantic, semantic_k, s.hub_weight, s.hub_neighbours)
    weights = leg_weights((h.place for h in fetched_hits), s)
    fused = fuse(cands, s, base, lexical_trusted=trusted, floor=floor, semantic_scores=semantic_scores, abbreviated=abbreviated, semantic_weight=weights.semantic)
    ranked = boost_groups(fused, s.group_weight)
    # the best `late_pool` fused, or every memory the legs fetched (each read whole only then)
    late_pool = [r.memory for r in ranked[: s.late_pool]] if s.late_pool else [h.memory for h in fetched_hits]
    ranked, late, late_scores = _late_leg(store, s, whole, ranked, late_pool, tokens, weights.late)
    ranked, cut = evidence.cut(query, ranked, whole.fill, lifts, late_scores, s, head, crowded, abbreviated)
    plan = Plan(
        PROFILE.identity(s),
        lexical={"mode": "any-term", "candidates": len(cands.lexical)},
        semantic={
            "embedder": embedder.name if embedder is not None else "none",
            "candidates": len(cands.semantic),
            "fetched": fetched,
            "hub_discount": {"weight": s.hub_weight, "neighbours": s.hub_neighbours},
            "floor": floor,
            "words_known": words_known,
            "unknown_name": stranger,
            "abbreviated": len(abbreviated),
            "baseline": round(base, 4),
            "top_lift": None if top_lift is None else round(top_lift, 4),
            **({"unavailable": cands.semantic_unavailable} if cands.semantic_unavailable else {}),
        },
        fusion={"method": s.fusion, "k": s.rrf_k, "weights": weights.plan(s.lexical_weight), "group_weight": s.group_weight, "results": len(ranked)},
        late=late,
        relevance={"floor": s.relevance_floor, "every_term_matched": every_term, "lexical_trusted": trusted},
        cut=cut,
    )
    return Retrieved(ranked, plan, whole)


def _abbreviated(
    query: str, cands: Candidates, whole: Records, crowded: bool, held: Callable[[str], bool]
) -> tuple[frozenset[str], frozenset[str], list[str]]:
    """The semantic hits a query word abbreviates (`relevance.abbreviates`), by reference; the
    query's initialisms they spell (names the store does hold, for `relevance.stranger`);
    and the words those initialisms stand for there ("PDB": "pod disruption budgets"), at
    most `initialism_expansions`, best hit first, for the read to be asked again with. In a
    small store (fewer than `semantic_candidates` memories, read whole) any abbreviation
    counts; in a crowded one only the query's `initialisms`, looked for only when the query
    has one, so other reads fetch nothing for it: a prefix such as "auth" begins words of
    many memories of a large store, a spelled initialism few. Only initialisms no memory
    holds as a word (not `held`) are spelled out."""
    asked = [i for i in relevance.initialisms(query) if not held(i)]
    if crowded and not asked:
        return frozenset(), frozenset(), []
    contents = {h.memory.reference: h.memory.content for h in cands.semantic}
    if cands.partial and contents:
        fetched = whole.fetch(list(contents))
        contents = {r: fetched[r].content for r in contents if r in fetched}
    spellings = {r: [(i, w) for i in asked if (w := relevance.spelled(i, c))] for r, c in contents.items()}
    spelled = frozenset(i for found in spellings.values() for i, _ in found)
    expansion = list(dict.fromkeys(text.fold(w) for found in spellings.values() for _, w in found))[:INITIALISM_EXPANSIONS]
    small = not crowded
    return frozenset(r for r, c in contents.items() if spellings[r] or (small and relevance.abbreviates(query, c))), spelled, expansion


def _best_holds_every_term(query: str, cands: Candidates, whole: Records) -> bool:
    """Whether the lexical leg's best hit holds every tolerant term of the query (stems, stop
    words aside: `relevance.holds_every_term`), "sunsetting" of "will be sunset", which the
    strict look (surface words, stop words too) does not find."""
    if not cands.lexical:
        return False
    best = cands.lexical[0].memory
    if cands.partial:
        best = whole.fetch([best.reference]).get(best.reference)
    return best is not None and relevance.holds_every_term(query, best.content)


def _late_leg(
    store: MemoryStore, s: RetrievalSettings, whole: Records, ranked: list[Ranked], pool: list[Memory], tokens: QueryTokens | None, weight: float
) -> tuple[list[Ranked], dict[str, Any], dict[str, float]]:
    """The late-interaction leg (`late`) over `pool` (the best `late_pool` fused memories,
    or all the legs fetched), joined to a ranking that is not empty (`fusion.add_late_leg`),
    and what it did for the plan. A memory without stored states (or in a form this version
    does not read) is not scored. With partial candidates the pool's states come with its
    whole records: the best of them are what the read returns, so one round trip serves both.
    Also each scored memory's score (by reference), which the evidence cut reads (`evidence`).
    `weight`: the leg's weight for this query (`fusion.leg_weights`)."""
    if tokens is None or weight <= 0:
        return ranked, {"used": False}, {}
    if not ranked:
        return ranked, {"used": False, "reason": "nothing relevant"}, {}
    from .late import LAYER, TokenStates, pool_scores

    refs = [m.reference for m in pool]
    if whole.partial:
        stored = {r: m.token_states for r, m in whole.fetch(refs, states=True).items() if m.token_states is not None}
    else:
        stored = store.token_states(refs, whole.rf)
    scored: list[tuple[Memory, TokenStates]] = []
    for m in pool:
        try:
            scored.append((m, TokenStates.from_bytes(stored[m.reference])))
        except (KeyError, ValueError):
            continue
    scores = pool_scores(tokens.ids, tokens.states, [t for _, t in scored])
    ranked = add_late_leg(ranked, [m for m, _ in scored], scores, weight, s.late_candidates)
    plan = {"used": True, "layer": LAYER, "weight": weight, "pool": len(pool), "scored": len(scored)}
    return ranked, plan, {m.reference: float(x) for (m, _), x in zip(scored, scores)}


PACK_CANDIDATES_PER_ITEM = PROFILE.constants.pack_candidates_per_item
INITIALISM_EXPANSIONS = PROFILE.constants.initialism_expansions


def context_candidates(max_items: int) -> int:
    """Candidates per leg a pack of `max_items` asks for: twice what it may hold (with 60 a
    50-item pack used up nearly every candidate)."""
    return PACK_CANDIDATES_PER_ITEM * max_items


def pack_context(
    got: Retrieved, settings: RetrievalSettings, packing: PackingSettings, max_items: int, max_tokens: int
) -> tuple[list[Ranked], Pack]:
    """`recall_context`'s pack of what `retrieve` gave: the diverse candidates in rank order,
    fetched whole a pack's worth at a time, and the kept ones `Pack` indexes. The plan says
    how diversity was judged and how many near-duplicates were met before the pack was full
    (`dropped` counts every candidate left out)."""
    kept, packed, skipped = diverse_pack(
        got.ranked, settings.diversity_threshold, max_items, max_tokens, packing.encoding, packing.min_useful_tokens,
        whole=lambda rs: got.records.pages(rs, max_items),
    )
    got.plan.diversity = {"method": "word-jaccard", "threshold": settings.diversity_threshold, "skipped": skipped}
    got.plan.profile = PROFILE.identity(settings, packing)  # the shortest useful cut is the profile's too
    return kept, packed


def diverse_pack(
    ranked: list[Ranked], threshold: float, max_items: int, max_tokens: int, encoding: str, min_useful_tokens: int,
    whole: Callable[[list[Ranked]], Iterable[Ranked]] = iter,
) -> tuple[list[Ranked], Pack, int]:
    """The pack of the candidates that do not nearly repeat one kept before them, the kept
    ones (`Pack` indexes them) and the near-duplicates skipped. The pack asks for the next
    candidate only while it has room, so the diversity check and the rendering of the ~100
    candidates a full pack never reaches are not done (nor their records fetched: `whole`
    yields the candidates whole, `Records.pages`); what it packs and drops is what the
    check over the whole list, then `pack`, would give."""
    near_duplicates = NearDuplicates(threshold)
    kept: list[Ranked] = []

    def contents():
        for r in whole(ranked):
            if near_duplicates.keeps(r.memory.content):
                kept.append(r)
                yield render.as_data(r.memory.content)

    packed = pack(contents(), max_items=max_items, max_tokens=max_tokens, encoding=encoding, min_useful_tokens=min_useful_tokens, total=len(ranked))
    return kept, packed, near_duplicates.skipped
