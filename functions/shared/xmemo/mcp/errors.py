"""The one place that turns domain errors into what an MCP client sees.

SPEC §6: a tool's own failure (validation, bounds, scopes, not found, store down) is a
tool result with `isError: true` whose text starts `Error <status> <code>: <message>`;
protocol failures are JSON-RPC errors (`jsonrpc.RpcError`). Messages never carry memory
content, so they are safe to return as they are."""

from __future__ import annotations

from typing import Any

from .. import status
from ..errors import XMemoError

def status_of(exc: XMemoError) -> int:
    return status.status_of(exc.code)


def error_text(exc: XMemoError) -> str:
    return f"Error {status_of(exc)} {exc.code}: {exc.message}"


def tool_error(exc: XMemoError) -> dict[str, Any]:
    """A `CallToolResult` reporting the tool's own failure to the model."""
    return {"content": [{"type": "text", "text": error_text(exc)}], "isError": True}
