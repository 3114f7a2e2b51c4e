"""OAuth protocol errors (RFC 6749 §5.2, RFC 7591 §3.2.2), independent of HTTP framing."""

from __future__ import annotations


class OAuthError(Exception):
    """`error` is the registered code; `description` is safe to show (never a secret).
    `redirect` False: the client or redirect URI itself is in doubt, so the person sees
    the error instead of being sent anywhere (RFC 6749 §4.1.2.1)."""

    def __init__(self, error: str, description: str, *, status: int = 400, redirect: bool = True):
        super().__init__(f"{error}: {description}")
        self.error = error
        self.description = description
        self.status = status
        self.redirect = redirect
        self.location: str | None = None  # set by /authorize: where to send the person with the error

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}
