"""Cognito as the upstream identity provider: the person logs in on its hosted login
with the stack's interactive app client, and the tokens MCP clients get are Cognito's.

This server runs its own PKCE with Cognito. The verifier is derived from the login id
(which only the person's browser and this server see, and which the store keeps only
as a different digest); between the callback and /token, Cognito's code and verifier are
kept sealed under this server's own code (`server.complete`), so the state store alone
cannot redeem a Cognito code."""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlencode

from ..credentials import LoginError, post_form
from .errors import OAuthError
from .server import AuthRequest, s256

Post = Callable[..., tuple[int, dict[str, Any]]]


def upstream_verifier(txn: str) -> str:
    return hashlib.sha256(b"xmemo-upstream-pkce:" + txn.encode()).hexdigest()  # 64 chars of [0-9a-f]


class CognitoUpstream:
    def __init__(self, domain_url: str, client_id: str, callback: str, post: Post = post_form):
        self.domain_url = domain_url.rstrip("/")  # https://<prefix>.auth.<region>.amazoncognito.com
        self.client_id = client_id
        self.callback = callback
        self._post = post

    @property
    def token_endpoint(self) -> str:
        return f"{self.domain_url}/oauth2/token"

    def login_url(self, txn: str, request: AuthRequest) -> str:
        return f"{self.domain_url}/oauth2/authorize?" + urlencode({
            "response_type": "code", "client_id": self.client_id, "redirect_uri": self.callback, "state": txn,
            "code_challenge": s256(upstream_verifier(txn)), "code_challenge_method": "S256",
            "scope": " ".join(["openid", *request.scopes]),
        })

    def callback_grant(self, txn: str, code: str) -> dict[str, str]:
        """What `complete` keeps until /token: Cognito's code (5 minutes, single use) and the
        verifier only this login's id yields."""
        return {"upstream_code": code, "upstream_verifier": upstream_verifier(txn)}

    def tokens(self, grant: Mapping[str, Any], request: AuthRequest) -> dict[str, Any]:
        return self._relay({"grant_type": "authorization_code", "client_id": self.client_id, "redirect_uri": self.callback,
                            "code": str(grant.get("upstream_code", "")), "code_verifier": str(grant.get("upstream_verifier", ""))})

    def refresh(self, refresh_token: str, scopes: Sequence[str], resource: str) -> dict[str, Any]:
        """Cognito's refresh grant (it keeps the scopes first granted and names no audience)."""
        return self._relay({"grant_type": "refresh_token", "client_id": self.client_id, "refresh_token": refresh_token})

    def client_credentials(self, form: Mapping[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        """Relayed as it came (HTTP Basic or form secret): Cognito checks the secret."""
        try:
            return self._post(self.token_endpoint, dict(form), {"Authorization": authorization} if authorization else None)
        except LoginError:
            return 503, {"error": "temporarily_unavailable", "error_description": "the identity provider is unreachable"}

    def _relay(self, form: dict[str, str]) -> dict[str, Any]:
        try:
            status, answer = self._post(self.token_endpoint, form)
        except LoginError:
            raise OAuthError("temporarily_unavailable", "the identity provider is unreachable", status=503) from None
        if status != 200 or not isinstance(answer.get("access_token"), str):
            raise OAuthError("invalid_grant", "the identity provider refused the grant")
        return answer
