"""CORS (Fetch standard) for what a browser-based MCP client (MCP Inspector, a web agent)
must reach before it has a token: the resource and authorization-server metadata,
registration and the token endpoint. Any origin, never credentials: these endpoints read
no cookie, and a wildcard origin forbids the browser from sending any. The login and
consent pages and /mcp are not opened to other origins."""

from __future__ import annotations

ANSWER = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": "WWW-Authenticate"}
PREFLIGHT_MAX_AGE = 86400
# what MCP clients send: Authorization (client_secret_basic), MCP-Protocol-Version (discovery)
ALLOWED_HEADERS = "Authorization, Content-Type, MCP-Protocol-Version"


def preflight_headers(methods: str) -> dict[str, str]:
    """The headers of the `204` answer to a preflight of a path allowing `methods`."""
    return {**ANSWER, "Access-Control-Allow-Methods": methods, "Access-Control-Allow-Headers": ALLOWED_HEADERS,
            "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE)}
