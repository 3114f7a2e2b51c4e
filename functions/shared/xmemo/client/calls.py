"""Each tool as a REST call (SPEC §7), shared by `XMemo` and `AsyncXMemo`. Parameters left out are not sent, so the server's defaults
and bounds (SPEC §3) stay the only ones; nothing is validated twice."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict
from urllib.parse import quote

from ..models import MemoryType
from .transport import Call


class ReadFilters(TypedDict, total=False):
    """Filters every read takes (they narrow what the caller may see, never widen it)."""

    bucket: str
    type: MemoryType
    tags: list[str]
    team: str
    project: str
    include_temporary: bool


class SearchFilters(ReadFilters, total=False):
    created_after: datetime | str
    created_before: datetime | str


class RememberOptions(TypedDict, total=False):
    type: MemoryType
    location: str
    bucket: str
    team: str
    project: str
    tags: list[str]
    temporary: bool
    ttl_seconds: int
    title: str
    supersedes: str


class ForgetFilters(TypedDict, total=False):
    bucket: str
    type: MemoryType
    tags: list[str]
    team: str
    project: str
    created_before: datetime | str


def _given(values: dict[str, Any]) -> dict[str, Any]:
    """The parameters actually given, JSON-ready (instants as ISO 8601, tags as a list)."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, (tuple, set, frozenset)):
            value = list(value)
        out[name] = value
    return out


def remember(content: str, options: RememberOptions) -> Call:
    # idempotent: the same content in the same boundary and bucket answers the existing reference
    return Call("POST", "/v1/memories", json=_given({"content": content, **options}))


def recall(query: str, limit: int | None, filters: ReadFilters) -> Call:
    return Call("POST", "/v1/recall", json=_given({"query": query, "limit": limit, **filters}))


def search(query: str, limit: int | None, filters: SearchFilters) -> Call:
    return Call("POST", "/v1/search", json=_given({"query": query, "limit": limit, **filters}))


def context(query: str, max_items: int | None, max_tokens: int | None, filters: ReadFilters) -> Call:
    return Call("POST", "/v1/context", json=_given({"query": query, "max_items": max_items, "max_tokens": max_tokens, **filters}))


def get(reference: str) -> Call:
    return Call("GET", f"/v1/memories/{quote(reference, safe='')}")


def list_page(limit: int | None, cursor: str | None, filters: ReadFilters) -> Call:
    """One page of `GET /v1/memories`: filters as query parameters, tags repeated."""
    params: list[tuple[str, str]] = []
    for name, value in _given({"limit": limit, "cursor": cursor, **filters}).items():
        for v in value if isinstance(value, list) else [value]:
            params.append((name, ("true" if v else "false") if isinstance(v, bool) else str(v)))
    return Call("GET", "/v1/memories", params=params)


def forget(reference: str | None, filters: ForgetFilters) -> Call:
    """By reference (`DELETE`, not retried once sent: a second delete of what the first
    removed would answer 404) or by filter (`POST /v1/forget`, safe to repeat)."""
    if reference is not None:
        if filters:
            raise ValueError("forget takes a reference or filters, not both")
        return Call("DELETE", f"/v1/memories/{quote(reference, safe='')}", idempotent=False)
    return Call("POST", "/v1/forget", json=_given(dict(filters)))

