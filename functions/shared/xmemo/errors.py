"""Domain errors. They carry the SPEC §6 code and a safe message; mapping to HTTP status
or JSON-RPC lives in `xmemo.api` and `xmemo.mcp`, nowhere else."""

from __future__ import annotations

from typing import Any


class XMemoError(Exception):
    """Base of every error a caller may see. `message` must never hold memory content."""

    code = "internal"

    def __init__(self, message: str, details: Any = None):
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidRequest(XMemoError):
    code = "invalid_request"


class Unauthorized(XMemoError):
    code = "unauthorized"


class InsufficientScope(XMemoError):
    code = "insufficient_scope"

    def __init__(self, scope: str):
        super().__init__(f"the token lacks the scope {scope}", {"required_scope": scope})
        self.scope = scope


class TeamMismatch(XMemoError):
    code = "team_mismatch"

    def __init__(self, team: str):
        super().__init__(f"the caller is not a member of team {team!r}", {"team": team})


class NotFound(XMemoError):
    code = "not_found"

    def __init__(self, message: str = "no memory with that reference is visible to the caller"):
        super().__init__(message)


class OutOfBounds(XMemoError):
    code = "out_of_bounds"


class CapturePolicyRefused(XMemoError):
    code = "capture_policy"


class StoreUnavailable(XMemoError):
    code = "store_unavailable"

    def __init__(self, message: str = "the memory store did not answer in time", retry_after: int = 2):
        super().__init__(message, {"retry_after_seconds": retry_after})
        self.retry_after = retry_after


class StoreMismatch(XMemoError):
    """The store (or the model file) was made with another embedder than this process runs:
    vectors of two models are not comparable, so the store is not opened until it is
    re-embedded (`xmemo reindex`). A deployment error, not a caller's: it maps to 500."""

    code = "internal"
