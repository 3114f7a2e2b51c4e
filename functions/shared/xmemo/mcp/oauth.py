"""How an MCP client finds out where to get a token (MCP authorization, RFC 9728).

A 401 names the resource-metadata document in `WWW-Authenticate`; that document names
the authorization server (on AWS the MCP authorization server in front of Cognito,
`xmemo.oauth`, when PublicBaseUrl is set, else the user pool's issuer; locally the
gateway, which serves the same authorization server) and the scopes."""

from __future__ import annotations

from typing import Any

from ..auth import READ, TEMPORARY, WRITE

WELL_KNOWN = "/.well-known/oauth-protected-resource"
SCOPES = (READ, WRITE, TEMPORARY)


def full_scopes(resource_server: str) -> list[str]:
    return [f"{resource_server}/{s}" for s in SCOPES]


def metadata_url(base_url: str, resource_path: str) -> str:
    """The document for `<base>/<resource_path>`, with the well-known segment inserted
    after the base (RFC 9728 §3.1; the base keeps an API Gateway stage prefix)."""
    return f"{base_url}{WELL_KNOWN}{resource_path}"


def challenge(metadata: str, *, scope: str | None = None, error: str | None = None, description: str | None = None) -> str:
    """A `WWW-Authenticate: Bearer …` value (RFC 6750 §3 + RFC 9728 §5.1)."""
    parts = []
    if error:
        parts.append(f'error="{error}"')
    if description:
        parts.append(f'error_description="{description}"')
    if scope:
        parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{metadata}"')
    return "Bearer " + ", ".join(parts)


def resource_metadata(resource: str, issuer: str, resource_server: str) -> dict[str, Any]:
    """The RFC 9728 document for `resource`."""
    return {
        "resource": resource,
        "authorization_servers": [issuer],
        "scopes_supported": full_scopes(resource_server),
        "bearer_methods_supported": ["header"],
        "resource_name": "XMemo",
        "resource_documentation": "https://docs.xmemo.dev/docs/mcp",
    }
