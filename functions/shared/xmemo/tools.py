"""The tools as plain functions over `Services`: remember, recall, search_memory,
recall_context, get_memory, list_memories, forget. Handlers, MCP and the CLI call these;
each checks its own scope, so no surface can skip it."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import timedelta
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

from .auth import READ, TEMPORARY, WRITE, Principal, check_team, read_filter
from .errors import InvalidRequest, NotFound
from .embedding import QueryTokens, passage_embeddings, query_embedding
from .models import (
    TTL_DEFAULT,
    ContextInput,
    ForgetInput,
    GetInput,
    ListInput,
    Memory,
    RecallInput,
    RememberInput,
    SearchInput,
    Source,
    boundary_of,
)
from .ids import new_reference
from .packing import Pack, PackedItem, pack
from .pasted import without_terminal_escapes
from . import evidence, relevance, render
from .results import (
    Budget,
    ContextResult,
    ForgetResult,
    Hit,
    ListResult,
    MemoryResult,
    PackItem,
    RecallResult,
    RememberResult,
    SearchResult,
)
from .retrieval import NearDuplicates, Plan, Ranked, add_late_leg, boost_groups, discount_hubs, fuse, lexical_only
from .services import Services


def content_hash(content: str) -> str:
    """sha256 of normalized content (NFKC, white space collapsed) for duplicate detection."""
    normal = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", content)).strip()
    return hashlib.sha256(normal.encode()).hexdigest()


# ---------------------------------------------------------------------------------------
def remember(svc: Services, principal: Principal, inp: RememberInput) -> RememberResult:
    from .policy import apply_policy_fields  # only the functions that write load the rules (at their initialisation)

    principal.require(WRITE)
    check_team(principal, inp.team)
    # the bounds of SPEC §3 apply to what the caller sent (the input model checked them):
    # a redaction marker longer than its secret never turns accepted content into a refusal
    content, cleaned = without_terminal_escapes(inp.content)
    if not content.strip():
        raise InvalidRequest("content is empty once terminal escape sequences are removed")
    captured, title, location = apply_policy_fields(content.strip(), inp.title, inp.location, svc.capture.capture_policy)
    now = svc.clock()
    if inp.supersedes is not None:
        rf = read_filter(principal, now, include_temporary=principal.has(TEMPORARY))
        if svc.store.get(inp.supersedes, rf) is None:
            raise NotFound()
    embedding = token_states = None
    if svc.embedder is not None:
        vectors, states = passage_embeddings(svc.embedder, [captured.content])
        embedding, token_states = tuple(float(x) for x in vectors[0]), states[0]
    ttl = (inp.ttl_seconds or TTL_DEFAULT) if inp.temporary else None
    memory = Memory(
        reference=new_reference(int(now.timestamp() * 1000)),
        type=inp.type,
        content=captured.content,
        title=title,
        location=location or inp.bucket,
        bucket=inp.bucket,
        owner=principal.owner,
        team=inp.team,
        project=inp.project,
        tags=tuple(dict.fromkeys(inp.tags)),
        boundary=boundary_of(principal.owner, inp.team, inp.project),
        source=Source(client_id=principal.client_id),
        created_at=now,
        updated_at=now,
        expires_at=now + timedelta(seconds=ttl) if ttl else None,
        temporary=inp.temporary,
        supersedes=inp.supersedes,
        content_sha256=content_hash(captured.content),
        embedding=embedding,
        token_states=token_states,
    )
    stored, duplicate = svc.store.insert(memory)
    if duplicate and not _may_read(principal, stored):
        # SPEC §3: a duplicate answers with the existing reference. The rest of that record
        # (a teammate's title, tags, source) is shown only to a writer who could read it;
        # others get their own write echoed with that reference (temporary memories are
        # never returned without memory:temporary, write-only tokens read nothing).
        stored = memory.model_copy(update={"reference": stored.reference})
    return RememberResult(memory=stored, duplicate=duplicate, redacted=list(captured.redacted), cleaned=cleaned)


def _may_read(principal: Principal, memory: Memory) -> bool:
    return principal.has(READ) and (not memory.temporary or principal.has(TEMPORARY))


# ---------------------------------------------------------------------------------------
def _filters_of(inp: Any) -> dict[str, Any]:
    names = ("bucket", "type", "tags", "team", "project", "include_temporary", "created_after", "created_before")
    out = {}
    for n in names:
        v = getattr(inp, n, None)
        if v not in (None, [], (), False):
            out[n] = v.isoformat() if hasattr(v, "isoformat") else (list(v) if isinstance(v, (list, tuple)) else v)
    return out


def _read_filter(svc: Services, principal: Principal, inp: Any):
    return read_filter(
        principal,
        svc.clock(),
        team=getattr(inp, "team", None),
        project=getattr(inp, "project", None),
        bucket=getattr(inp, "bucket", None),
        type=getattr(inp, "type", None),
        tags=getattr(inp, "tags", ()),
        include_temporary=getattr(inp, "include_temporary", False),
        created_after=getattr(inp, "created_after", None),
        created_before=getattr(inp, "created_before", None),
    )


class Records:
    """The whole records of ranked candidates a store gave as `Candidates.partial` (only what
    ranking reads): fetched for those a read returns, a page at a time, each once; a
    candidate forgotten since the search is left out. With whole candidates, a no-op."""

    def __init__(self, svc: Services, rf: Any, partial: bool):
        self.store, self.rf, self.partial = svc.store, rf, partial
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


def _candidates(svc: Services, principal: Principal, inp: Any, wanted: int = 0) -> tuple[list[Ranked], Plan, Records]:
    """The tolerant retrieval `recall` and `recall_context` share: both legs, fused, and
    nothing when nothing is relevant enough (`xmemo.relevance`). Each leg keeps its
    setting's number of candidates, or `wanted` if more (a large pack); the semantic leg
    fetches `hub_pool` times that and keeps the best once hubs are discounted. The ranked
    memories may be partial: `Records` makes the ones returned whole."""
    principal.require(READ)
    rf = _read_filter(svc, principal, inp)
    s = svc.retrieval
    vector, tokens = query_embedding(svc.embedder, inp.query, principal.owner) if svc.embedder is not None else (None, None)
    semantic_k = max(s.semantic_candidates, wanted)
    pool = semantic_k * s.hub_pool if s.hub_weight > 0 else semantic_k
    cands = svc.store.search(inp.query, vector, rf, lexical_k=max(s.lexical_candidates, wanted), semantic_k=pool, strict=False)
    whole = Records(svc, rf, cands.partial)
    base = relevance.baseline(svc.embedder, vector) if vector is not None else 0.0
    top_lift = max(h.score for h in cands.semantic) - base if cands.semantic else None
    every_term = False
    if top_lift is not None and top_lift < s.relevance_floor:  # only weak queries pay for this look
        every_term = bool(svc.store.search(inp.query, None, rf, lexical_k=1, semantic_k=0, strict=True).lexical)
    trusted = relevance.lexical_trusted(top_lift, every_term, s.relevance_floor)
    crowded = len(cands.semantic) >= s.semantic_candidates
    words_known, fetched = bool(cands.lexical), len(cands.semantic)
    floor = relevance.semantic_floor_for(words_known, top_lift, crowded, s.semantic_floor, s.unknown_words_floor)
    stranger = relevance.stranger(
        top_lift, crowded, s.unknown_names_floor, lambda name: not svc.store.search(name, None, rf, lexical_k=1, semantic_k=0, strict=True).lexical, inp.query
    )
    if stranger:  # a name no memory holds, and no hit strong enough to answer anyway
        cands.lexical, cands.semantic = [], []
    in_hand = list({h.memory.reference: h.memory for h in (*cands.lexical, *cands.semantic)}.values())  # before the discount keeps fewer
    lifts = {h.memory.reference: h.score - base for h in cands.semantic}  # every fetched hit's, for the evidence cut
    cands.semantic, semantic_scores = discount_hubs(cands.semantic, semantic_k, s.hub_weight, s.hub_neighbours)
    abbreviated = frozenset()
    if not crowded:  # a small store: fewer than `semantic_candidates` memories, read whole
        contents = {h.memory.reference: h.memory.content for h in cands.semantic}
        if cands.partial and contents:
            contents = {r: m.content for r, m in whole.fetch(list(contents)).items()}
        abbreviated = frozenset(r for r, c in contents.items() if relevance.abbreviates(inp.query, c))
    fused = fuse(cands, s, base, lexical_trusted=trusted, floor=floor, semantic_scores=semantic_scores, abbreviated=abbreviated)
    ranked = boost_groups(fused, s.group_weight)
    late_pool = [r.memory for r in ranked[: s.late_pool]] if s.late_pool else in_hand
    ranked, late, late_scores = _late_leg(svc, whole, ranked, late_pool, tokens)
    head = getattr(inp, "limit", None) or inp.max_items  # what the read returns at most: the records it fetches anyway
    ranked, cut = evidence.cut(inp.query, ranked, whole.fill, lifts, late_scores, s, head, crowded)
    plan = Plan(
        lexical={"mode": "any-term", "candidates": len(cands.lexical)},
        semantic={
            "embedder": svc.embedder.name if svc.embedder is not None else "none",
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
        fusion={"method": s.fusion, "k": s.rrf_k, "weights": {"lexical": s.lexical_weight, "semantic": s.semantic_weight}, "group_weight": s.group_weight, "results": len(ranked)},
        late=late,
        filters=_filters_of(inp),
        relevance={"floor": s.relevance_floor, "every_term_matched": every_term, "lexical_trusted": trusted},
        cut=cut,
    )
    return ranked, plan, whole


def _late_leg(
    svc: Services, whole: Records, ranked: list[Ranked], pool: list[Memory], tokens: QueryTokens | None
) -> tuple[list[Ranked], dict[str, Any], dict[str, float]]:
    """The late-interaction leg (`xmemo.late`) over `pool` (the best `late_pool` fused
    memories, or all the legs fetched), joined to a ranking that is not empty
    (`retrieval.add_late_leg`), and what it did for the plan. A memory without stored
    states (or in a form this version does not read) is not scored. With partial
    candidates the pool's states come with its whole records: the best of them are what
    the read returns, so one round trip serves both. Also each scored memory's score
    (by reference), which the evidence cut reads (`xmemo.evidence`)."""
    s = svc.retrieval
    if tokens is None or s.late_weight <= 0:
        return ranked, {"used": False}, {}
    if not ranked:
        return ranked, {"used": False, "reason": "nothing relevant"}, {}
    from .late import LAYER, TokenStates, pool_scores

    refs = [m.reference for m in pool]
    if whole.partial:
        stored = {r: m.token_states for r, m in whole.fetch(refs, states=True).items() if m.token_states is not None}
    else:
        stored = svc.store.token_states(refs, whole.rf)
    scored: list[tuple[Memory, TokenStates]] = []
    for m in pool:
        try:
            scored.append((m, TokenStates.from_bytes(stored[m.reference])))
        except (KeyError, ValueError):
            continue
    scores = pool_scores(tokens.ids, tokens.states, [t for _, t in scored])
    ranked = add_late_leg(ranked, [m for m, _ in scored], scores, s.late_weight, s.late_candidates)
    plan = {"used": True, "layer": LAYER, "weight": s.late_weight, "pool": len(pool), "scored": len(scored)}
    return ranked, plan, {m.reference: float(x) for (m, _), x in zip(scored, scores)}


PACK_CANDIDATES_PER_ITEM = 2


def _hits(ranked: list[Ranked]) -> list[Hit]:
    """Ranked memories as result hits (built from fields already validated)."""
    return [Hit.model_construct(**dict(r.memory), score=round(r.score, 6)) for r in ranked]


def recall(svc: Services, principal: Principal, inp: RecallInput) -> RecallResult:
    ranked, plan, whole = _candidates(svc, principal, inp)
    return RecallResult(results=_hits(whole.first(ranked, inp.limit)), retrieval_plan=plan.as_dict())


def search_memory(svc: Services, principal: Principal, inp: SearchInput) -> SearchResult:
    principal.require(READ)
    rf = _read_filter(svc, principal, inp)
    cands = svc.store.search(inp.query, None, rf, lexical_k=inp.limit, semantic_k=0, strict=True)
    plan = Plan(lexical={"mode": "all-terms", "candidates": len(cands.lexical)}, semantic={"used": False}, filters=_filters_of(inp))
    return SearchResult(results=_hits(lexical_only(cands)[: inp.limit]), retrieval_plan=plan.as_dict())


def _pack_item(r: Ranked, p: PackedItem) -> PackItem:
    m = r.memory
    return PackItem(
        reference=m.reference, type=m.type, location=m.location, boundary=m.boundary, score=round(r.score, 6),
        tokens=p.tokens, shortened=p.shortened, content=p.text, created_at=m.created_at, source=m.source,
    )


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


def recall_context(svc: Services, principal: Principal, inp: ContextInput) -> ContextResult:
    # twice what the pack may hold per leg: with 60 a 50-item pack used up nearly every candidate
    ranked, plan, whole = _candidates(svc, principal, inp, wanted=PACK_CANDIDATES_PER_ITEM * inp.max_items)
    s = svc.packing
    kept, packed, skipped = diverse_pack(
        ranked, svc.retrieval.diversity_threshold, inp.max_items, inp.max_tokens, s.encoding, s.min_useful_tokens,
        whole=lambda rs: whole.pages(rs, inp.max_items),
    )
    # near-duplicates met before the pack was full; `dropped` counts every candidate left out
    plan.diversity = {"method": "word-jaccard", "threshold": svc.retrieval.diversity_threshold, "skipped": skipped}
    items = [_pack_item(kept[p.index], p) for p in packed.items]
    budget = Budget(
        max_items=inp.max_items,
        max_tokens=inp.max_tokens,
        used_items=len(items),
        used_tokens=packed.used_tokens,
        dropped=packed.dropped + plan.cut.get("dropped", 0),  # the evidence cut's too: candidates left out
        shortened=packed.shortened,
        encoding=s.encoding,
    )
    return ContextResult(
        query=inp.query, retrieval_plan=plan.as_dict(), budget=budget, items=items, context_text=packed.context_text
    )


# ---------------------------------------------------------------------------------------
def get_memory(svc: Services, principal: Principal, inp: GetInput) -> MemoryResult:
    principal.require(READ)
    rf = read_filter(principal, svc.clock(), include_temporary=principal.has(TEMPORARY))
    memory = svc.store.get(inp.reference, rf)
    if memory is None:
        raise NotFound()
    return MemoryResult(memory=memory)


def list_memories(svc: Services, principal: Principal, inp: ListInput) -> ListResult:
    principal.require(READ)
    rf = _read_filter(svc, principal, inp)
    memories, cursor = svc.store.list(rf, inp.limit, inp.cursor)
    return ListResult(memories=memories, next_cursor=cursor)


def forget(svc: Services, principal: Principal, inp: ForgetInput) -> ForgetResult:
    """Delete by reference (404 when not visible) or by filter (the count, maybe 0).
    Superseded and expired copies within the caller's reach go too; temporary memories
    are reached only with the temporary scope, as for reads."""
    principal.require(WRITE)
    rf = read_filter(
        principal,
        svc.clock(),
        team=inp.team,
        project=inp.project,
        bucket=inp.bucket,
        type=inp.type,
        tags=inp.tags,
        include_temporary=principal.has(TEMPORARY),
        created_before=inp.created_before,
        live_only=False,
    )
    deleted = svc.store.delete(rf, inp.reference)
    if inp.reference is not None and deleted == 0:
        raise NotFound()
    return ForgetResult(deleted=deleted)


def purge_expired(svc: Services) -> int:
    """Scheduled job: delete expired temporary memories."""
    return svc.store.purge_expired(svc.clock())


def finish_supersedes(svc: Services) -> int:
    """Scheduled job: finish superseding writes that a store failure cut off (OpenSearch)."""
    return svc.store.finish_supersedes(svc.clock())
