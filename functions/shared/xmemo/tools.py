"""The tools as plain functions over `Services`: remember, recall, search_memory,
recall_context, get_memory, list_memories, forget. Handlers, MCP and the CLI call these;
each checks its own scope, so no surface can skip it."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import timedelta
from typing import Any

from .auth import READ, TEMPORARY, WRITE, Principal, check_team, read_filter
from .errors import InvalidRequest, NotFound
from .embedding import passage_embeddings
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
from .packing import PackedItem
from .pasted import without_terminal_escapes
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
from .retrieval import pipeline
from .retrieval.fusion import Ranked
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


def _retrieve(svc: Services, principal: Principal, inp: Any, *, strict: bool = False, wanted: int = 0, head: int = 0) -> pipeline.Retrieved:
    """A read that ranks: the caller's scope checked, its read filter built here (the one
    place), then the one retrieval entry point (`retrieval.pipeline.retrieve`) over the
    configured store; the plan records the request's filters."""
    principal.require(READ)
    rf = _read_filter(svc, principal, inp)
    got = pipeline.retrieve(svc.store, svc.embedder, svc.retrieval, inp.query, rf, caller=principal.owner, strict=strict, wanted=wanted, head=head)
    got.plan.filters = _filters_of(inp)
    return got


def _hits(ranked: list[Ranked]) -> list[Hit]:
    """Ranked memories as result hits (built from fields already validated)."""
    return [Hit.model_construct(**dict(r.memory), score=round(r.score, 6)) for r in ranked]


def recall(svc: Services, principal: Principal, inp: RecallInput) -> RecallResult:
    got = _retrieve(svc, principal, inp, head=inp.limit)
    return RecallResult(results=_hits(got.first(inp.limit)), retrieval_plan=got.plan.as_dict())


def search_memory(svc: Services, principal: Principal, inp: SearchInput) -> SearchResult:
    got = _retrieve(svc, principal, inp, strict=True, wanted=inp.limit)
    return SearchResult(results=_hits(got.first(inp.limit)), retrieval_plan=got.plan.as_dict())


def _pack_item(r: Ranked, p: PackedItem) -> PackItem:
    m = r.memory
    return PackItem(
        reference=m.reference, type=m.type, location=m.location, boundary=m.boundary, score=round(r.score, 6),
        tokens=p.tokens, shortened=p.shortened, content=p.text, created_at=m.created_at, source=m.source,
    )


def recall_context(svc: Services, principal: Principal, inp: ContextInput) -> ContextResult:
    got = _retrieve(svc, principal, inp, wanted=pipeline.context_candidates(inp.max_items), head=inp.max_items)
    s = svc.packing
    kept, packed = pipeline.pack_context(got, svc.retrieval, s, inp.max_items, inp.max_tokens)
    items = [_pack_item(kept[p.index], p) for p in packed.items]
    budget = Budget(
        max_items=inp.max_items,
        max_tokens=inp.max_tokens,
        used_items=len(items),
        used_tokens=packed.used_tokens,
        dropped=packed.dropped + got.plan.cut.get("dropped", 0),  # the evidence cut's too: candidates left out
        shortened=packed.shortened,
        encoding=s.encoding,
    )
    return ContextResult(
        query=inp.query, retrieval_plan=got.plan.as_dict(), budget=budget, items=items, context_text=packed.context_text
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
