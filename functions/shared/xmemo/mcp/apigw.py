"""API Gateway (REST, proxy integration) events in and out of the MCP endpoint.

Routes: `POST /mcp` (public profile), `POST /mcp/full` (full surface), and
`GET /.well-known/oauth-protected-resource[/mcp[/full]]` (RFC 9728). Identity comes only
from `requestContext.authorizer.claims`, which the Cognito authorizer (or the local
gateway) filled in after verifying the token."""

from __future__ import annotations

import base64
from functools import lru_cache
from typing import Any, Callable, Mapping

from ..config import Settings
from ..services import Services, default_services
from . import oauth, registry
from .transport import Endpoint, HttpRequest, HttpResponse

SURFACES = {"/mcp": registry.PUBLIC, "/mcp/full": registry.FULL}
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


@lru_cache(maxsize=1)
def _settings() -> Settings:
    return Settings()


def handle_event(event: Mapping[str, Any], *, settings: Settings | None = None,
                 services: Callable[[], Services] | None = None) -> dict[str, Any]:
    """The proxy response for one event (tests pass their own settings and services)."""
    settings = settings or _settings()
    services = services or default_services
    raw = event.get("body") or ""
    if len(raw) > settings.max_body_bytes:  # refused before it is decoded or parsed
        return proxy_response(HttpResponse(400, body_too_large(settings.max_body_bytes)))
    req = http_request(event)
    path = route_path(event)
    base = base_url(event, settings)
    if path.startswith(oauth.WELL_KNOWN):
        return proxy_response(well_known(req, path[len(oauth.WELL_KNOWN):], base, settings))
    surface = SURFACES.get(path)
    if surface is None:
        return proxy_response(HttpResponse(404, {"error": {"code": "not_found", "message": "no such route"}}))
    endpoint = Endpoint(
        surface=surface,
        services=services,
        resource_server=settings.resource_server,
        metadata_url=oauth.metadata_url(base, path),
        allowed_origins=allowed_origins(base, settings),
    )
    claims = ((event.get("requestContext") or {}).get("authorizer") or {}).get("claims")
    return proxy_response(endpoint.handle(req, claims))


def body_too_large(limit: int) -> dict[str, Any]:
    """The JSON-RPC error for a body over `XMEMO_MAX_BODY_BYTES` (the local gateway answers
    the same before reading it)."""
    from .jsonrpc import INVALID_REQUEST, error

    return error(None, INVALID_REQUEST, f"Invalid Request: the request body exceeds {limit} bytes")


def allowed_origins(base: str, settings: Settings) -> frozenset[str]:
    """Configured origins, plus the local gateway's own origin on loopback (the gateway has
    already refused any Host that is not its loopback address)."""
    origins = {o.rstrip("/").lower() for o in settings.mcp_allowed_origins}
    if _is_loopback(base):
        origins.add(base.lower())
    return frozenset(origins)


def _is_loopback(base: str) -> bool:
    return base.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0] in LOOPBACK


def well_known(req: HttpRequest, suffix: str, base: str, settings: Settings) -> HttpResponse:
    if req.method != "GET":
        return HttpResponse(405, {"error": {"code": "invalid_request", "message": "GET only"}}, {"Allow": "GET"})
    if suffix not in ("", "/mcp", "/mcp/full"):
        return HttpResponse(404, {"error": {"code": "not_found", "message": "no such protected resource"}})
    issuer = settings.oauth_issuer or _local_issuer(base, settings)
    if issuer is None:
        return HttpResponse(404, {"error": {"code": "not_found", "message": "no authorization server is configured (XMEMO_OAUTH_ISSUER)"}})
    doc = oauth.resource_metadata(base + suffix, issuer, settings.resource_server)
    return HttpResponse(200, doc, {"Cache-Control": "public, max-age=3600"})


def _local_issuer(base: str, settings: Settings) -> str | None:
    """On loopback the local gateway is its own authorization server (`XMEMO_ISSUER`, or
    the gateway's own URL, as the tokens it mints say)."""
    return (settings.issuer or base) if _is_loopback(base) else None


def http_request(event: Mapping[str, Any]) -> HttpRequest:
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items() if v is not None}
    body = event.get("body")
    if body is not None and event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8", errors="replace")
    return HttpRequest(method=str(event.get("httpMethod") or "").upper(), headers=headers, body=body)


def route_path(event: Mapping[str, Any]) -> str:
    """The route without any stage prefix: the resource template when API Gateway gives
    one, else the path."""
    path = event.get("resource") or event.get("path") or "/"
    if "{" in path:  # a greedy template such as /.well-known/oauth-protected-resource/{proxy+}
        path = event.get("path") or path
        stage = (event.get("requestContext") or {}).get("stage")
        if stage and path.startswith(f"/{stage}/"):
            path = path[len(stage) + 1:]
    return path.rstrip("/") or "/"


def base_url(event: Mapping[str, Any], settings: Settings) -> str:
    """Public URL prefix of the API: configured, or rebuilt from the request (host plus the
    stage on an execute-api domain)."""
    if settings.public_base_url:
        return settings.public_base_url.rstrip("/")
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items() if v is not None}
    ctx = event.get("requestContext") or {}
    host = headers.get("host") or ctx.get("domainName") or "localhost"
    hostname = host.rsplit(":", 1)[0]
    scheme = headers.get("x-forwarded-proto") or ("http" if hostname in LOOPBACK else "https")
    stage = ctx.get("stage")
    prefix = f"/{stage}" if stage and host.endswith(".amazonaws.com") else ""
    return f"{scheme}://{host}{prefix}"


def proxy_response(resp: HttpResponse) -> dict[str, Any]:
    headers = dict(resp.headers)
    if resp.body is not None:
        headers.setdefault("Content-Type", "application/json")
    return {"statusCode": resp.status, "headers": headers, "body": resp.text(), "isBase64Encoded": False}
