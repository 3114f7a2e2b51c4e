"""SPEC §6 errors as the client raises them. Each subclasses the service's own domain error
(`xmemo.errors`), so each `code` is defined once and `except xmemo.errors.NotFound` catches
a 404 whether the tool ran in-process or over HTTP."""

from __future__ import annotations

from typing import Any

from .. import errors


class APIError(errors.XMemoError):
    """An error answer of the service: `status`, `code`, `message`, `details`, and
    `retry_after` (seconds, from the `Retry-After` header) when the server sent one."""

    def __init__(self, status: int, code: str, message: str, details: Any = None, retry_after: float | None = None):
        errors.XMemoError.__init__(self, message, details)
        self.status = status
        self.code = code
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.message}"


class InvalidRequestError(APIError, errors.InvalidRequest):
    pass


class UnauthorizedError(APIError, errors.Unauthorized):
    pass


class InsufficientScopeError(APIError, errors.InsufficientScope):
    @property
    def scope(self) -> str | None:
        """The scope the server said is missing (`details.required_scope`)."""
        return self.details.get("required_scope") if isinstance(self.details, dict) else None


class TeamMismatchError(APIError, errors.TeamMismatch):
    pass


class NotFoundError(APIError, errors.NotFound):
    pass


class OutOfBoundsError(APIError, errors.OutOfBounds):
    pass


class CapturePolicyError(APIError, errors.CapturePolicyRefused):
    pass


class StoreUnavailableError(APIError, errors.StoreUnavailable):
    pass


class RateLimitedError(APIError):
    """429: the API's throttle (API Gateway usage plans), not a SPEC §6 code; retried."""

    code = "rate_limited"


class ServerError(APIError):
    """Any other 5xx (a Lambda crash answered 502 by API Gateway, a 504 timeout)."""


class TransportError(errors.XMemoError):
    """No answer at all (connection refused or cut, timed out) once retries are spent."""

    code = "transport"


class AuthenticationError(errors.XMemoError):
    """A token could not be obtained (the token endpoint refused the client, or no login)."""

    code = "authentication"


_BY_CODE: dict[str, type[APIError]] = {
    cls.code: cls
    for cls in (
        InvalidRequestError,
        UnauthorizedError,
        InsufficientScopeError,
        TeamMismatchError,
        NotFoundError,
        OutOfBoundsError,
        CapturePolicyError,
        StoreUnavailableError,
    )
}
_BY_STATUS: dict[int, type[APIError]] = {400: InvalidRequestError, 401: UnauthorizedError, 404: NotFoundError, 429: RateLimitedError, 503: StoreUnavailableError}


def error_from(status: int, body: Any, retry_after: float | None = None) -> APIError:
    """The exception for an error answer. A SPEC §6 body picks the class by its code;
    anything else (API Gateway's own `{"message": …}`, a proxy's page) by the status."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        code, message, details = error["code"], str(error.get("message") or error["code"]), error.get("details")
        cls = _BY_CODE.get(code) or _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
        return cls(status, code, message, details, retry_after)
    cls = _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    message = body.get("message") if isinstance(body, dict) and isinstance(body.get("message"), str) else f"HTTP {status}"
    code = cls.code if cls not in (APIError, ServerError) else f"http_{status}"
    return cls(status, code, message, None, retry_after)
