"""The MCP routes on the shared Lambda edge: `POST /mcp` (public profile), `POST /mcp/full`
(full surface) and `GET /.well-known/oauth-protected-resource[/mcp[/full]]` (RFC 9728),
registered on a resolver from `api.resolver()`, so MCP gets the same entry point
(correlation id, tracer, metrics, Powertools logger), services and settings as REST.

Identity comes only from `requestContext.authorizer.claims`, which the Cognito authorizer
(or the local gateway) filled in after verifying the token. The protocol itself lives in
`transport` and `dispatch`; this module only turns events into requests and back."""

from __future__ import annotations

import base64
import re
from typing import Any, Mapping

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types

from .. import api
from ..config import Settings
from ..oauth import cors
from . import dispatch, oauth, registry
from .jsonrpc import INVALID_REQUEST, error
from .transport import Endpoint, HttpRequest, HttpResponse

SURFACES = {"/mcp": registry.PUBLIC, "/mcp/full": registry.FULL}
METADATA_SUFFIXES = ("", "/mcp", "/mcp/full")
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
# Every verb reaches the endpoint so the transport can answer 405 itself (SPEC §7: GET is 405).
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]


def register(app: APIGatewayRestResolver) -> None:
    """Add the MCP and resource-metadata routes to `app`."""
    for path in SURFACES:
        app.route(path, method=METHODS)(lambda path=path: mcp(app, path))
    for suffix in METADATA_SUFFIXES:
        app.route(oauth.WELL_KNOWN + suffix, method=METHODS)(lambda suffix=suffix: metadata(app, suffix))


def mcp(app: APIGatewayRestResolver, path: str) -> Response:
    event = app.current_event.raw_event
    settings = api.settings()
    raw = event.get("body") or ""
    if len(raw) > settings.max_body_bytes:  # refused before it is decoded or parsed
        return response(HttpResponse(400, body_too_large(settings.max_body_bytes)))
    base = base_url(event, settings)
    endpoint = Endpoint(
        surface=SURFACES[path],
        services=api.services,
        resource_server=settings.resource_server,
        metadata_url=oauth.metadata_url(base, path),
        allowed_origins=allowed_origins(base, settings),
        observer=dispatch.Observer(count=api.count, logger=api.logger),
    )
    return response(endpoint.handle(http_request(event), api.claims_of(event)))


def metadata(app: APIGatewayRestResolver, suffix: str) -> Response:
    """The RFC 9728 document of `<base><suffix>`, naming the token issuer; readable from
    any origin (a browser-based client discovers here first), never with credentials."""
    event = app.current_event.raw_event
    settings = api.settings()
    method = str(event.get("httpMethod") or "").upper()
    if method == "OPTIONS":
        return response(HttpResponse(204, None, cors.preflight_headers("GET, OPTIONS")))
    if method != "GET":
        return response(HttpResponse(405, {"error": {"code": "invalid_request", "message": "GET only"}}, {"Allow": "GET", **cors.ANSWER}))
    base = base_url(event, settings)
    issuer = settings.oauth_issuer or _local_issuer(base, settings)
    if issuer is None:
        return response(HttpResponse(404, api.error_body("not_found", "no authorization server is configured (XMEMO_OAUTH_ISSUER)"),
                                     cors.ANSWER))
    doc = oauth.resource_metadata(base + suffix, issuer, settings.resource_server)
    return response(HttpResponse(200, doc, {"Cache-Control": "public, max-age=3600", **cors.ANSWER}))


def body_too_large(limit: int) -> dict[str, Any]:
    """The JSON-RPC error for a body over `XMEMO_MAX_BODY_BYTES` (the local gateway answers
    the same before reading it)."""
    return error(None, INVALID_REQUEST, f"Invalid Request: the request body exceeds {limit} bytes")


def allowed_origins(base: str, settings: Settings) -> frozenset[str]:
    """Configured origins, plus the API's own origin (the memory console is served from it)
    where that origin cannot be an attacker's DNS name: the configured public URL, the
    local gateway on loopback (it has already refused any other Host), or API Gateway's
    own `execute-api` domain (it routes no other Host to this API)."""
    origins = {o.rstrip("/").lower() for o in settings.mcp_allowed_origins}
    own = "/".join(base.split("/", 3)[:3]).lower()  # scheme://host[:port], no stage
    host = own.split("://", 1)[-1].rsplit(":", 1)[0]
    if settings.public_base_url or _is_loopback(base) or re.fullmatch(r"[a-z0-9]+\.execute-api\.[a-z0-9-]+\.amazonaws\.com", host):
        origins.add(own)
    return frozenset(origins)


def _is_loopback(base: str) -> bool:
    return base.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0] in LOOPBACK


def _local_issuer(base: str, settings: Settings) -> str | None:
    """On loopback the local gateway is its own authorization server (`XMEMO_ISSUER`, or
    the gateway's own URL, as the tokens it mints say)."""
    return (settings.issuer or base) if _is_loopback(base) else None


def _headers(event: Mapping[str, Any]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items() if v is not None}


def http_request(event: Mapping[str, Any]) -> HttpRequest:
    body = event.get("body")
    if body is not None and event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8", errors="replace")
    return HttpRequest(method=str(event.get("httpMethod") or "").upper(), headers=_headers(event), body=body)


def base_url(event: Mapping[str, Any], settings: Settings) -> str:
    """Public URL prefix of the API: configured, or rebuilt from the request (host plus the
    stage on an execute-api domain)."""
    if settings.public_base_url:
        return settings.public_base_url.rstrip("/")
    headers = _headers(event)
    ctx = event.get("requestContext") or {}
    host = headers.get("host") or ctx.get("domainName") or "localhost"
    hostname = host.rsplit(":", 1)[0]
    scheme = headers.get("x-forwarded-proto") or ("http" if hostname in LOOPBACK else "https")
    stage = ctx.get("stage")
    prefix = f"/{stage}" if stage and host.endswith(".amazonaws.com") else ""
    return f"{scheme}://{host}{prefix}"


def response(resp: HttpResponse) -> Response:
    """A transport answer as the resolver's response (JSON when there is a body)."""
    return Response(
        status_code=resp.status,
        content_type=content_types.APPLICATION_JSON if resp.body is not None else None,
        body=resp.text(),
        headers=dict(resp.headers),
    )
