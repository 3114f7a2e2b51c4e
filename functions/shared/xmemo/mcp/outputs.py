"""Schemas of the full surface's `structuredContent`, one model per tool result.

They describe exactly what `Result.structured()` returns (a unit test validates real
results against them, and MCP clients validate `structuredContent` against the
`outputSchema` generated from them)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from ..models import Memory, MemoryType


class _Out(BaseModel):
    model_config = {"extra": "forbid"}


class Hit(Memory):
    score: float = Field(description="Fused relevance score; only the order is meaningful.")


class RememberOutput(_Out):
    memory: Memory
    duplicate: bool = Field(description="True when the same content already existed; nothing new was stored.")
    redacted: list[str] = Field(description="Kinds of secrets the capture policy redacted.")


class SearchOutput(_Out):
    results: list[Hit] = Field(description="Hits, best first.")
    retrieval_plan: dict[str, Any] = Field(description="What retrieval did: legs, candidate counts, fusion, filters.")


class Budget(_Out):
    max_items: int
    max_tokens: int
    used_items: int
    used_tokens: int = Field(description="Tokens of `context_text`, never above `max_tokens`.")
    dropped: int = Field(description="Matching candidates left out of the pack.")
    shortened: int = Field(description="Items cut to fit (marked with …).")
    encoding: str = Field(description="tiktoken encoding the tokens were counted with.")


class PackItem(_Out):
    reference: str
    type: MemoryType
    location: str
    boundary: str
    score: float
    tokens: int
    shortened: bool
    content: str = Field(description="The text as packed (possibly shortened).")
    created_at: datetime


class ContextOutput(_Out):
    version: str
    query: str
    retrieval_plan: dict[str, Any]
    budget: Budget
    items: list[PackItem] = Field(description="Packed memories in pack order; item n is `[n]` in `context_text`.")
    context_text: str


class MemoryOutput(_Out):
    memory: Memory


class ListOutput(_Out):
    memories: list[Memory] = Field(description="Newest first.")
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last page.")


class ForgetOutput(_Out):
    deleted: int = Field(description="How many memories were deleted.")
