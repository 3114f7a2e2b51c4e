"""The memory console: a static web page, shipped inside the package, that
people use to browse, find, inspect, budget and correct their memories.

It is served by the console route of the API (`functions/console/app.py`), hence by the
local gateway too, which serves every route of template.yaml. The files hold no data:
every memory on screen comes from the REST API (and the public MCP profile, for the exact
text an agent receives) called with the person's own token, so the route is public, and
the page is locked down instead: a strict Content-Security-Policy (no inline code, no
other origins, Trusted Types so no string can become markup), no framing, no referrer."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..models import MEMORY_TYPES

STATIC = Path(__file__).with_name("static")
INDEX = "index.html"
CONFIG = "config.json"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
SCOPES = ("memory:read", "memory:write", "memory:temporary")


@dataclass(frozen=True)
class Asset:
    body: str
    content_type: str


@lru_cache(maxsize=1)
def assets() -> dict[str, Asset]:
    """Every file of `static/` by its name (`app.js`; the folder is flat, as the route
    `/console/{asset}` is one path segment). Only these names are ever served: a request
    path is a key of this table, never a file path."""
    out: dict[str, Asset] = {}
    for path in sorted(STATIC.iterdir()):
        if path.is_file() and path.suffix in TYPES:
            out[path.name] = Asset(path.read_text(encoding="utf-8"), TYPES[path.suffix])
    return out


def asset(name: str) -> Asset | None:
    return assets().get(name)


def origin_of(url: str | None) -> str | None:
    """`https://host[:port]` of a URL, or None when it is not an absolute http(s) URL."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(auth_url: str | None) -> str:
    """Same-origin scripts, styles and requests only; the hosted login's origin is added to
    `connect-src` because the page exchanges the PKCE code at its token endpoint."""
    connect = " ".join(filter(None, ("'self'", origin_of(auth_url))))
    return "; ".join(
        (
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            f"connect-src {connect}",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
            "require-trusted-types-for 'script'",
            "trusted-types 'none'",
        )
    )


def headers(content_type: str, auth_url: str | None, *, cache: bool) -> dict[str, str]:
    """Response headers of every console file."""
    return {
        "Content-Type": content_type,
        "Content-Security-Policy": content_security_policy(auth_url),
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cache-Control": "public, max-age=300" if cache else "no-store",
    }


def config(auth_url: str | None, client_id: str | None, resource_server: str) -> dict[str, Any]:
    """What the page needs: how to sign people in (the hosted login, authorization code +
    PKCE with the public interactive client, when configured; else none, and the page
    takes a token, as `make run` prints it) and the memory types its filters offer."""
    login = None
    if origin_of(auth_url) and client_id:
        base = auth_url.rstrip("/")  # type: ignore[union-attr]
        login = {
            "authorize_url": f"{base}/oauth2/authorize",
            "token_url": f"{base}/oauth2/token",
            "client_id": client_id,
            "scopes": ["openid", *(f"{resource_server}/{s}" for s in SCOPES)],
        }
    return {"login": login, "resource_server": resource_server, "types": list(MEMORY_TYPES)}
