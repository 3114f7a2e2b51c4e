"""Records and tool inputs. The `Field` bounds are SPEC §3's, and the descriptions are the
tool documentation that `tools/list`, the OpenAPI document and the README are built from."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from .deferred import DeferredModel
from .errors import InvalidRequest, OutOfBounds, XMemoError

MemoryType = Literal["fact", "decision", "preference", "procedure", "note", "event", "summary"]
MEMORY_TYPES: tuple[str, ...] = MemoryType.__args__  # type: ignore[attr-defined]

SLUG_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,62}$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
Reference = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")]

CONTENT_MAX = 8000
QUERY_MAX = 2000
LOCATION_MAX = 256
TITLE_MAX = 200
TTL_MIN, TTL_MAX, TTL_DEFAULT = 60, 2_592_000, 86_400


# Content is taken as sent, control characters included (terminal output, a form feed):
# `remember` removes ANSI escape sequences and says so, and `render` shows every other
# control character so that it cannot start a line (SPEC §5).
Content = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=CONTENT_MAX)]
Query = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=QUERY_MAX)]
Location = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=LOCATION_MAX, pattern=r"^[^\s\x00-\x1f|][^\x00-\x1f|]*$"),
]


class _Input(DeferredModel):
    """Tool inputs reject unknown fields and never coerce across types. Their validators are
    built on first use, not at import: each function uses one or two of them, and builds
    those while it initialises (`xmemo.startup.build_models`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------------------------------
# remember
class RememberPublic(_Input):
    """Store one durable memory (a decision, fact, preference, procedure or note worth
    keeping across sessions) so later `recall`, `search_memory` and `recall_context` calls
    find it.

    Use it once something is settled: a decision taken, a preference stated, a procedure
    that worked. Do not store chit-chat or what can be re-derived. Secrets in the content
    (cloud keys, tokens, private keys, passwords, JWTs) are redacted to
    `[REDACTED:<kind>]` before anything is stored, or the write is refused, depending on the
    deployment. Writing the same content to the same boundary and bucket again stores
    nothing and returns the existing reference. The memory is findable as soon as this
    returns.

    Returns text: `Stored: Reference: <id> | Type: <type> | Location: <path>` (or
    `Duplicate of: …`), then a `Redacted: <kinds>` line when secrets were redacted."""

    content: Content = Field(description="The memory itself, 1–8,000 characters after trimming. Never truncated.")
    type: MemoryType = Field("note", description="What kind of memory this is.")
    location: Location | None = Field(
        None,
        description="Path-like place the memory belongs to or came from, e.g. `memory-os/decisions` or `docs/auth.md` (≤256 chars; default: the bucket). "
        "Under `chat/` or `conversations/` (e.g. `chat/2026-03-02`), memories are a conversation's turns: each is also found by the words of the turns around it.",
    )
    bucket: Slug = Field("default", description="Bucket (slug) that groups memories; recall can be limited to one.")
    team: Slug | None = Field(None, description="Share with this team (the caller must belong to it). Default: private to the caller.")
    project: Slug | None = Field(None, description="Narrow the boundary to a project (slug).")
    tags: list[Slug] = Field(default_factory=list, max_length=16, description="Up to 16 slug tags.")
    temporary: bool = Field(False, strict=True, description="A temporary memory expires after `ttl_seconds` and is only read with the temporary scope.")
    ttl_seconds: int | None = Field(
        None, strict=True, ge=TTL_MIN, le=TTL_MAX, description="Lifetime of a temporary memory, 60–2,592,000 s (default 86,400)."
    )

    @model_validator(mode="after")
    def _ttl_needs_temporary(self) -> "RememberPublic":
        if self.ttl_seconds is not None and not self.temporary:
            raise ValueError("ttl_seconds applies only to temporary memories (set temporary: true)")
        return self


class RememberInput(RememberPublic):
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=TITLE_MAX)] | None = Field(
        None, description="Optional short title."
    )
    supersedes: Reference | None = Field(None, description="Reference of a memory this one replaces; the old one stops being returned.")


# ---------------------------------------------------------------------------------------
# reads: shared filters
class _ReadFilters(_Input):
    bucket: Slug | None = Field(None, description="Only this bucket.")
    type: MemoryType | None = Field(None, description="Only this memory type.")
    tags: list[Slug] = Field(default_factory=list, max_length=16, description="Only memories carrying all of these tags.")
    team: Slug | None = Field(None, description="Only this team's memories (must be one of the caller's teams).")
    project: Slug | None = Field(None, description="Only this project's memories.")
    include_temporary: bool = Field(False, strict=True, description="Also return temporary memories (needs the memory:temporary scope).")


class RecallPublic(_Input):
    """Best-effort recall of the few stored memories most relevant to a question, before
    answering it. Tolerant: typos, other word forms, other languages and paraphrases still
    match (lexical and semantic retrieval fused). Searches every memory visible to you.

    Prefer `search_memory` when a loosely related hit would be dangerous (there every term
    must match), and `recall_context` to restore a whole token-budgeted context at the
    start of a task.

    Returns text: `### XMemo Recall`, `Results: <n>`, then one block per hit, best first:
    `<rank>. Reference: <id> | Type: <type> | Location: <path> | Boundary: <boundary>`
    followed by the content indented three spaces. When nothing matches the whole answer
    is `No matching XMemo memory was found.`: a valid answer, not an error."""

    query: Query = Field(description="Natural-language question or topic to recall (1–2,000 characters).")
    limit: int = Field(5, strict=True, ge=1, le=20, description="How many hits at most (1–20).")


class RecallInput(RecallPublic, _ReadFilters):
    pass


class SearchPublic(_Input):
    """Strict search: returns only memories containing every query term (no fuzzy
    matching, no semantic neighbours), narrowed by exact filters. Use it where a weak or
    approximate hit would be dangerous: identifiers, names, configuration keys, versions.

    Prefer `recall` for natural-language questions, where paraphrases should match.

    Returns text shaped like `recall`'s, headed `### XMemo Search`: `Results: <n>`, then
    ranked blocks `<rank>. Reference: <id> | Type: <type> | Location: <path> | Boundary:
    <boundary>` with the content indented below. When nothing matches the whole answer is
    `No matching XMemo memory was found.`"""

    query: Query = Field(description="Terms that must all match (1–2,000 characters).")
    project: Slug | None = Field(None, description="Only this project's memories.")
    team: Slug | None = Field(None, description="Only this team's memories (must be one of the caller's teams).")
    type: MemoryType | None = Field(None, description="Only this memory type.")
    limit: int = Field(10, strict=True, ge=1, le=50, description="How many hits at most (1–50).")


class SearchInput(SearchPublic):
    bucket: Slug | None = Field(None, description="Only this bucket.")
    tags: list[Slug] = Field(default_factory=list, max_length=16, description="Only memories carrying all of these tags.")
    created_after: datetime | None = Field(None, description="Only memories created at or after this instant (ISO 8601).")
    created_before: datetime | None = Field(None, description="Only memories created before this instant (ISO 8601).")
    include_temporary: bool = Field(False, strict=True, description="Also return temporary memories (needs the memory:temporary scope).")


class ContextPublic(_Input):
    """Restore the context needed to continue work across sessions: a bounded pack of
    several relevant memories whose text fits a token budget, ready to read before acting.
    Changes nothing. Call it at the start of a task or when resuming a project; prefer
    `recall` for a quick answer to one question.

    Returns text: `### XMemo Context`, `Items: <n>`, a `Budget: used_items=<u>/<max>
    used_tokens=<t>/<max> dropped=<d> shortened=<s>` line only when something was left out
    or cut, one `Reference: <id> | Type: <type> | Location: <path>` line per packed memory
    in pack order, then `Context:` and the packed text, where item n starts with `[n] `
    (cite it by that number and its reference); a shortened item ends with `…`. When nothing
    matches the whole answer is `No matching XMemo memory was found.`"""

    query: Query = Field(description="Natural-language request the context pack is assembled for (1–2,000 characters).")
    max_items: int = Field(8, strict=True, ge=1, le=50, description="Most memories in the pack (1–50).")
    max_tokens: int = Field(1500, strict=True, ge=1, le=12000, description="Most tokens of context text (1–12,000).")


class ContextInput(ContextPublic, _ReadFilters):
    pass


class GetInput(_Input):
    """Fetch one memory, with all its fields, by the reference another tool returned.

    Returns text: `Reference: <id> | Type: <type> | Location: <path> | Boundary:
    <boundary>`, then the content. A reference you cannot see, or that does not exist, is
    `Error 404 not_found` (the same answer either way)."""

    reference: Reference = Field(description="The memory's opaque reference.")


class ListInput(_ReadFilters):
    """List the memories visible to you, newest first, one page at a time, optionally
    narrowed by bucket, type, tags, team or project. Use it to browse or audit; use
    `recall` or `search_memory` to find memories by what they say.

    Returns text: `### XMemo Memories`, `Results: <n>`, one `<n>. Reference: <id> | Type:
    <type> | Location: <path> | Boundary: <boundary>` line per memory, and `Next cursor:
    <cursor>` when there is another page (pass it back as `cursor`)."""

    limit: int = Field(20, strict=True, ge=1, le=100, description="Page size (1–100).")
    cursor: Annotated[str, StringConstraints(max_length=200)] | None = Field(None, description="`next_cursor` of the previous page.")


class ForgetInput(_Input):
    """Delete memories permanently: one by `reference`, or every memory visible to you
    that matches all the given filters (at least one; a reference and filters cannot be
    combined). Irreversible, and never reaches beyond what you can see.

    Returns text `Deleted: <n>`. An unknown or invisible reference is
    `Error 404 not_found`."""

    reference: Reference | None = Field(None, description="Delete this memory.")
    bucket: Slug | None = Field(None, description="Delete in this bucket.")
    type: MemoryType | None = Field(None, description="Delete memories of this type.")
    tags: list[Slug] = Field(default_factory=list, max_length=16, description="Delete memories carrying all of these tags.")
    team: Slug | None = Field(None, description="Delete this team's memories.")
    project: Slug | None = Field(None, description="Delete this project's memories.")
    created_before: datetime | None = Field(None, description="Delete memories created before this instant.")

    @model_validator(mode="after")
    def _needs_selector(self) -> "ForgetInput":
        filters = (self.bucket, self.type, self.team, self.project, self.created_before)
        if self.reference is None and not self.tags and all(f is None for f in filters):
            raise ValueError("forget needs a reference or at least one filter")
        if self.reference is not None and (self.tags or any(f is not None for f in filters)):
            raise ValueError("forget takes a reference or filters, not both")
        return self


# ---------------------------------------------------------------------------------------
# the stored record
class Source(BaseModel):
    client_id: str | None = None
    agent: str | None = None
    session: str | None = None


class Memory(BaseModel):
    """One stored memory. `holder` (`owner:<o>` or `team:<t>`) is who may read it."""

    model_config = ConfigDict(frozen=True)

    reference: str
    type: MemoryType
    content: str
    title: str | None = None
    location: str
    bucket: str
    owner: str
    team: str | None = None
    project: str | None = None
    tags: tuple[str, ...] = ()
    boundary: str
    source: Source = Field(default_factory=Source)
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    temporary: bool = False
    supersedes: str | None = None
    superseded_by: str | None = None
    content_sha256: str
    embedding: tuple[float, ...] | None = Field(None, exclude=True, repr=False)
    # `late.TokenStates.to_bytes()` of the content, from the run that made `embedding`
    token_states: bytes | None = Field(None, exclude=True, repr=False)

    @property
    def holder(self) -> str:
        return holder_of(self.owner, self.team)

    def public_dict(self) -> dict[str, Any]:
        """The record as returned to callers (no embedding, no token states)."""
        return self.model_dump(mode="json")


def holder_of(owner: str, team: str | None) -> str:
    return f"team:{team}" if team else f"owner:{owner}"


def boundary_of(owner: str, team: str | None, project: str | None) -> str:
    base = holder_of(owner, team)
    return f"{base}/project:{project}" if project else base


# ---------------------------------------------------------------------------------------
# validation errors → domain errors
_BOUND_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "string_too_long", "too_long"}


def parse_input(model: type[BaseModel], data: Any) -> Any:
    """Validate `data` into `model`, turning pydantic's errors into SPEC §6 errors:
    a bound of §3 exceeded is 422 `out_of_bounds`, anything else 400 `invalid_request`."""
    if not isinstance(data, dict):
        raise InvalidRequest("the request body must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from None


def validation_error(exc: ValidationError) -> XMemoError:
    problems = [
        {"field": ".".join(str(p) for p in err["loc"]) or "(body)", "problem": err["msg"], "type": err["type"]}
        for err in exc.errors(include_url=False, include_input=False, include_context=False)
    ]
    if problems and all(p["type"] in _BOUND_ERRORS for p in problems):
        fields = ", ".join(p["field"] for p in problems)
        return OutOfBounds(f"out of bounds: {fields}", problems)
    first = problems[0] if problems else {"field": "(body)", "problem": "invalid"}
    return InvalidRequest(f"invalid {first['field']}: {first['problem']}", problems)
