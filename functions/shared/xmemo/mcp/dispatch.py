"""One JSON-RPC request in, one result out: `initialize`, `ping`, `server/discover`,
`tools/list`, `tools/call`. The HTTP rules (headers, versions, batches, status codes) are
`transport`'s; by the time a request gets here its revision is settled."""

from __future__ import annotations

import logging
import traceback
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from .. import __version__, render
from ..auth import Principal
from ..errors import XMemoError
from ..services import Services
from . import registry, versions
from .errors import tool_error
from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, RpcError



@dataclass(frozen=True)
class Observer:
    """Where tool calls are counted and failures logged. The Lambda edge hands in its
    Powertools metrics and logger (`xmemo.mcp.edge`), so MCP calls land in the same
    `ToolCalls` metric and structured logs as REST calls; the default only logs."""

    count: Callable[[str], None] = lambda _tool: None
    logger: Any = field(default_factory=lambda: logging.getLogger(__name__))

INSTRUCTIONS = (
    "XMemo is durable memory shared across sessions and agents. At the start of a task call "
    "`recall_context` to restore what earlier sessions decided (a token-budgeted pack). Use "
    "`recall` for a quick best-effort lookup and `search_memory` when only exact matches are "
    "acceptable. Store decisions, facts, preferences and procedures worth keeping with "
    "`remember`. References (mem_…) are opaque ids; cite them as given."
)


@lru_cache(maxsize=1)
def server_info() -> dict[str, str]:
    return {"name": "xmemo", "title": "XMemo", "version": __version__}


@dataclass
class Context:
    """Everything a request is answered from: no state survives between requests."""

    surface: str
    principal: Principal
    services: Callable[[], Services]  # lazy: listing tools never opens the store
    version: str
    modern: bool
    observer: Observer = field(default_factory=Observer)


def _capabilities() -> dict[str, Any]:
    return {"tools": {"listChanged": False}}


def initialize(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": versions.negotiate(params.get("protocolVersion")),
        "capabilities": _capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    }


def discover(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {
        "supportedVersions": list(versions.SUPPORTED),
        "capabilities": _capabilities(),
        "instructions": INSTRUCTIONS,
        "ttlMs": 3_600_000,
        "cacheScope": "public",  # the same for every caller
    }


def ping(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    return {}


def tools_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    structured = versions.has_structured_output(ctx.version)
    out: dict[str, Any] = {"tools": registry.listed(ctx.surface, ctx.principal, structured)}
    if ctx.modern:
        out["ttlMs"] = 300_000
        out["cacheScope"] = "private"  # depends on the caller's scopes
    return out


def tools_call(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "tools/call needs a tool `name`")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise RpcError(INVALID_PARAMS, "`arguments` must be an object")
    tool = registry.catalogue(ctx.surface).get(name)
    if tool is None:
        raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    try:
        ctx.principal.require(tool.scope)  # before validation: a missing scope is the answer
        result = tool.run(ctx.services(), ctx.principal, tool.parse(arguments))
    except XMemoError as exc:
        return tool_error(exc)
    except Exception as exc:  # never leak a stack trace or content to the caller
        # The type and where it was raised, never the message (it may quote content).
        ctx.observer.logger.error(
            "tool failed", extra={"tool": name, "error_type": type(exc).__name__, "frames": traceback.format_tb(exc.__traceback__)[-5:]}
        )
        raise RpcError(INTERNAL_ERROR, "internal error") from None
    ctx.observer.count(name)
    out: dict[str, Any] = {"content": [{"type": "text", "text": render.text(result)}], "isError": False}
    if ctx.surface == registry.FULL and versions.has_structured_output(ctx.version):
        out["structuredContent"] = result.structured()
    return out


LEGACY_METHODS: dict[str, Callable[[Context, dict[str, Any]], dict[str, Any]]] = {
    "initialize": initialize,
    "ping": ping,
    "tools/list": tools_list,
    "tools/call": tools_call,
}
# 2026-07-28 removed `initialize` and `ping` and added `server/discover`.
MODERN_METHODS: dict[str, Callable[[Context, dict[str, Any]], dict[str, Any]]] = {
    "server/discover": discover,
    "tools/list": tools_list,
    "tools/call": tools_call,
}


def handle(ctx: Context, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The `result` of one request, or raise `RpcError`."""
    table = MODERN_METHODS if ctx.modern else LEGACY_METHODS
    fn = table.get(method)
    if fn is None:
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")
    value = fn(ctx, params)
    if ctx.modern:
        value["resultType"] = "complete"
        value["_meta"] = {versions.META_SERVER_INFO: server_info()}
    return value
