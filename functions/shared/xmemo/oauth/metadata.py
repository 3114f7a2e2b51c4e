"""The authorization server's metadata (RFC 8414; served at both well-known names)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..auth import READ, TEMPORARY, WRITE

SCOPE_NAMES = (READ, WRITE, TEMPORARY)
GRANT_TYPES = ("authorization_code", "refresh_token", "client_credentials")


def xmemo_scopes(resource_server: str) -> list[str]:
    """The three scopes as Cognito names them: `<resource server>/memory:read` …"""
    return [f"{resource_server}/{name}" for name in SCOPE_NAMES]


@dataclass(frozen=True)
class Endpoints:
    """Where this server answers: the issuer and its endpoints, all absolute URLs."""

    issuer: str

    @property
    def authorization(self) -> str:
        return f"{self.issuer}/oauth2/authorize"

    @property
    def token(self) -> str:
        return f"{self.issuer}/oauth2/token"

    @property
    def registration(self) -> str:
        return f"{self.issuer}/oauth2/register"

    @property
    def callback(self) -> str:
        """Where the upstream identity provider sends the person back (AWS)."""
        return f"{self.issuer}/oauth2/callback"


def server_metadata(endpoints: Endpoints, scopes: Sequence[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "issuer": endpoints.issuer,
        "authorization_endpoint": endpoints.authorization,
        "token_endpoint": endpoints.token,
        "registration_endpoint": endpoints.registration,
        "scopes_supported": list(scopes),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(GRANT_TYPES),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
        **(extra or {}),
    }
