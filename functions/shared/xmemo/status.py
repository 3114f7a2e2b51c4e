"""SPEC §6: the HTTP status of every error code. Shared by the two error mappings (REST in
`xmemo.api`, MCP tool results in `xmemo.mcp.errors`, whose text starts `Error <status>`);
the domain errors themselves stay free of transport details."""

from __future__ import annotations

STATUS: dict[str, int] = {
    "invalid_request": 400,
    "unauthorized": 401,
    "insufficient_scope": 403,
    "team_mismatch": 403,
    "not_found": 404,
    "out_of_bounds": 422,
    "capture_policy": 422,
    "store_unavailable": 503,
}


def status_of(code: str) -> int:
    """The status of `code`; an unknown code is a programming error, reported as 500."""
    return STATUS.get(code, 500)
