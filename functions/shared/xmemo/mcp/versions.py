"""The protocol revisions this server speaks, and what each one changes on the wire.

Legacy revisions (2025-*) open with `initialize` and then name the negotiated version in
the `MCP-Protocol-Version` header; the modern revision (2026-07-28) has no handshake and
carries the version and client capabilities in every request's `_meta`. The server keeps
no state either way: a legacy request is judged by its header alone."""

from __future__ import annotations

LEGACY: tuple[str, ...] = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN: tuple[str, ...] = ("2026-07-28",)
SUPPORTED: tuple[str, ...] = MODERN + tuple(reversed(LEGACY))  # newest first
LATEST_LEGACY = LEGACY[-1]
ASSUMED_WITHOUT_HEADER = "2025-03-26"  # what a request without the header speaks (2025-06-18 §transports)
BATCHING = frozenset({"2025-03-26"})  # JSON-RPC batches were removed in 2025-06-18

HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def negotiate(requested: object) -> str:
    """`initialize`: answer with the client's version if we speak it, else our latest legacy one."""
    return requested if isinstance(requested, str) and requested in LEGACY else LATEST_LEGACY


def has_structured_output(version: str) -> bool:
    """`outputSchema` / `structuredContent` exist from 2025-06-18 on."""
    return version != "2025-03-26"
