"""Tool results, one pydantic model each: the only definition of what a tool answers.

The tools return these; the structured profile of SPEC §5 (REST bodies and the full MCP
surface's `structuredContent`) is their JSON dump, the MCP `outputSchema` and the OpenAPI
response schemas are generated from them, and `render` turns them into the §5 texts.
Extra fields are forbidden, so a field added in one place and not here fails loudly."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from .deferred import DeferredModel
from .models import Memory, MemoryType, Source

PACK_VERSION = "1"


class _Result(DeferredModel):
    # built on first use, as the inputs are (`xmemo.models._Input`)
    model_config = ConfigDict(extra="forbid")

    def structured(self) -> dict[str, Any]:
        """The structured profile: exactly this model's JSON dump."""
        return self.model_dump(mode="json")


class Hit(Memory, DeferredModel):
    """A memory as a ranked hit: the record plus its score."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    score: float = Field(description="Fused relevance score; only the order is meaningful.")


class RememberResult(_Result):
    memory: Memory
    duplicate: bool = Field(description="True when the same content already existed; nothing new was stored.")
    redacted: list[str] = Field(description="Kinds of secrets the capture policy redacted.")
    cleaned: list[str] = Field(
        default_factory=list,
        description="What was removed from the content before storing: `ansi_escape_sequences` (terminal colours and cursor moves).",
    )


class SearchResult(_Result):
    """`search_memory`'s hits (strict; rendered as `### XMemo Search`)."""

    results: list[Hit] = Field(description="Hits, best first.")
    retrieval_plan: dict[str, Any] = Field(description="What retrieval did: legs, candidate counts, fusion, filters.")


class RecallResult(SearchResult):
    """`recall`'s hits: the same shape as a search, rendered as `### XMemo Recall`."""


class Budget(_Result):
    max_items: int
    max_tokens: int
    used_items: int
    used_tokens: int = Field(description="Tokens of `context_text`, never above `max_tokens`.")
    dropped: int = Field(description="Matching candidates left out of the pack.")
    shortened: int = Field(description="Items cut to fit (marked with …).")
    encoding: str = Field(description="tiktoken encoding the tokens were counted with.")


class PackItem(_Result):
    reference: str
    type: MemoryType
    location: str
    boundary: str
    score: float
    tokens: int
    shortened: bool
    content: str = Field(description="The text as packed (possibly shortened; further lines indented as in `context_text`).")
    created_at: datetime
    source: Source = Field(description="Who stored it (client, agent, session), so an agent can weigh it.")


class ContextResult(_Result):
    version: Literal["1"] = PACK_VERSION
    query: str
    retrieval_plan: dict[str, Any]
    budget: Budget
    items: list[PackItem] = Field(description="Packed memories in pack order; item n is `[n]` in `context_text`.")
    context_text: str

    @property
    def matched(self) -> bool:
        """Whether anything matched: every matching candidate is either packed or dropped."""
        return bool(self.budget.used_items or self.budget.dropped)


class MemoryResult(_Result):
    memory: Memory


class ListResult(_Result):
    memories: list[Memory] = Field(description="Newest first.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


class ForgetResult(_Result):
    deleted: int = Field(ge=0, description="How many memories were deleted.")


Result = RememberResult | SearchResult | ContextResult | MemoryResult | ListResult | ForgetResult
