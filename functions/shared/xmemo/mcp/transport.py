"""The Streamable HTTP transport, stateless, JSON responses only.

Rules (MCP transports 2025-03-26 … 2026-07-28): POST only (GET and DELETE are 405: no
SSE stream, no sessions, `Mcp-Session-Id` is ignored and never minted); a notification or
response is 202 with no body; a body that is not JSON is -32700; a request is answered
with one JSON object. Legacy requests are judged by their `MCP-Protocol-Version` header
(absent = 2025-03-26, the only revision with batches); a 2026-07-28 request carries its
version and client capabilities in `_meta` and mirrors method and tool name in the
`Mcp-Method` / `Mcp-Name` headers, which must agree with the body."""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..auth import READ, WRITE, Principal, principal_from_claims
from ..errors import Unauthorized
from ..services import Services
from . import dispatch, jsonrpc, oauth, versions
from .jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    RpcError,
)

JSON = "application/json"
# Most messages one batch may carry: each is a tool call, so an unbounded batch would let
# one HTTP request run unbounded work inside one Lambda invocation.
MAX_BATCH = 20
# HTTP status of a JSON-RPC error under 2026-07-28 (streamable-http §request metadata).
MODERN_STATUS = {METHOD_NOT_FOUND: 404, jsonrpc.INTERNAL_ERROR: 500}


@dataclass(frozen=True)
class HttpRequest:
    method: str
    headers: Mapping[str, str]  # lower-case names
    body: str | None


@dataclass
class HttpResponse:
    status: int
    body: Any = None  # JSON-serialisable, or None for an empty body
    headers: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        return "" if self.body is None else json.dumps(self.body, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Endpoint:
    """One MCP endpoint (`/mcp` = public profile, `/mcp/full` = full surface)."""

    surface: str
    services: Callable[[], Services]
    resource_server: str
    metadata_url: str  # RFC 9728 document of this endpoint, named in 401/403 challenges
    allowed_origins: frozenset[str] = frozenset()
    allowed_hosts: frozenset[str] | None = None  # set on loopback: DNS-rebinding protection
    observer: dispatch.Observer = field(default_factory=dispatch.Observer)  # metrics and logs

    # -- HTTP -----------------------------------------------------------------------------
    def handle(self, req: HttpRequest, claims: Mapping[str, Any] | None) -> HttpResponse:
        refused = self._check_origin(req)
        if refused is not None:
            return refused
        if req.method != "POST":
            return HttpResponse(405, jsonrpc.error(None, INVALID_REQUEST, "Method not allowed: POST only (stateless server, no SSE stream, no sessions)"), {"Allow": "POST"})
        try:
            principal = principal_from_claims(claims, self.resource_server)
        except Unauthorized as exc:
            challenge = oauth.challenge(self.metadata_url, error="invalid_token" if claims else None, description=exc.message if claims else None)
            return HttpResponse(401, {"error": {"code": "unauthorized", "message": exc.message}}, {"WWW-Authenticate": challenge})
        if not (principal.has(READ) or principal.has(WRITE)):
            scope = " ".join(oauth.full_scopes(self.resource_server)[:2])
            challenge = oauth.challenge(self.metadata_url, error="insufficient_scope", scope=scope)
            return HttpResponse(403, {"error": {"code": "insufficient_scope", "message": f"the token needs {scope.replace(' ', ' or ')}"}}, {"WWW-Authenticate": challenge})
        accept = req.headers.get("accept")
        if accept and not _accepts_json(accept):
            return HttpResponse(406, jsonrpc.error(None, INVALID_REQUEST, "Not Acceptable: the client must accept application/json"))
        ctype = req.headers.get("content-type")
        if ctype and ctype.split(";")[0].strip().lower() != JSON:
            return HttpResponse(415, jsonrpc.error(None, INVALID_REQUEST, "Unsupported Media Type: send application/json"))
        try:
            message = json.loads(req.body or "")
        except ValueError:
            return HttpResponse(400, jsonrpc.error(None, PARSE_ERROR, "Parse error: the body is not JSON"))
        except RecursionError:  # `[[[[…` thousands deep: hostile input, not a server fault
            return HttpResponse(400, jsonrpc.error(None, PARSE_ERROR, "Parse error: the JSON is nested too deeply"))
        if isinstance(message, list):
            return self._batch(req, principal, message)
        return self._single(req, principal, message)

    def _check_origin(self, req: HttpRequest) -> HttpResponse | None:
        if self.allowed_hosts is not None and req.headers.get("host", "").lower() not in self.allowed_hosts:
            return HttpResponse(403, jsonrpc.error(None, INVALID_REQUEST, "Forbidden: unexpected Host"))
        origin = req.headers.get("origin")
        if origin is not None and origin.rstrip("/").lower() not in self.allowed_origins:
            return HttpResponse(403, jsonrpc.error(None, INVALID_REQUEST, "Forbidden: Origin not allowed"))
        return None

    # -- one message ----------------------------------------------------------------------
    def _single(self, req: HttpRequest, principal: Principal, message: Any) -> HttpResponse:
        id_ = jsonrpc.readable_id(message)
        try:
            kind = jsonrpc.kind(message)
        except RpcError as exc:
            return HttpResponse(400, exc.body(id_))
        if kind != "request":
            return HttpResponse(202)  # notifications and responses: accepted, nothing to say
        method, params = message["method"], message.get("params") or {}
        if method == "initialize":
            return self._legacy(principal, id_, method, params, versions.LATEST_LEGACY)
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        header_version = req.headers.get(versions.HEADER)
        if versions.META_VERSION in meta or header_version in versions.MODERN or method == "server/discover":
            return self._modern(req, principal, id_, method, params)
        version = header_version or versions.ASSUMED_WITHOUT_HEADER
        return self._legacy(principal, id_, method, params, version)

    def _legacy(self, principal: Principal, id_: Any, method: str, params: dict, version: str) -> HttpResponse:
        if version not in versions.LEGACY:
            return HttpResponse(400, _unsupported(id_, version))
        ctx = dispatch.Context(self.surface, principal, self.services, version, modern=False, observer=self.observer)
        try:
            return HttpResponse(200, jsonrpc.result(id_, dispatch.handle(ctx, method, params)))
        except RpcError as exc:  # a protocol error inside a well-formed exchange: 200 + error
            return HttpResponse(200, exc.body(id_))

    def _modern(self, req: HttpRequest, principal: Principal, id_: Any, method: str, params: dict) -> HttpResponse:
        try:
            version = _check_envelope(req, method, params)
            ctx = dispatch.Context(self.surface, principal, self.services, version, modern=True, observer=self.observer)
            return HttpResponse(200, jsonrpc.result(id_, dispatch.handle(ctx, method, params)))
        except RpcError as exc:
            return HttpResponse(MODERN_STATUS.get(exc.code, 400), exc.body(id_))

    # -- batches (2025-03-26 only) --------------------------------------------------------
    def _batch(self, req: HttpRequest, principal: Principal, messages: list) -> HttpResponse:
        version = req.headers.get(versions.HEADER) or versions.ASSUMED_WITHOUT_HEADER
        if version not in versions.BATCHING:
            return HttpResponse(400, jsonrpc.error(None, INVALID_REQUEST, f"JSON-RPC batches are not part of protocol revision {version}"))
        if not messages:
            return HttpResponse(400, jsonrpc.error(None, INVALID_REQUEST, "empty batch"))
        if len(messages) > MAX_BATCH:
            return HttpResponse(400, jsonrpc.error(None, INVALID_REQUEST, f"a batch carries at most {MAX_BATCH} messages"))
        replies = []
        for message in messages:
            id_ = jsonrpc.readable_id(message)
            try:
                kind = jsonrpc.kind(message)
            except RpcError as exc:
                replies.append(exc.body(id_))
                continue
            if kind != "request":
                continue
            if message["method"] == "initialize":
                replies.append(jsonrpc.error(id_, INVALID_REQUEST, "initialize must not be part of a batch"))
                continue
            replies.append(self._legacy(principal, id_, message["method"], message.get("params") or {}, version).body)
        return HttpResponse(200, replies) if replies else HttpResponse(202)


def _unsupported(id_: Any, requested: Any) -> dict:
    return jsonrpc.error(id_, UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                         {"supported": list(versions.SUPPORTED), "requested": requested})


def _check_envelope(req: HttpRequest, method: str, params: dict) -> str:
    """The 2026-07-28 ladder: `_meta` fields present (-32602), headers agree with the
    body (-32020), the version is one we speak (-32022). Returns the version."""
    meta = params.get("_meta")
    if not isinstance(meta, dict) or versions.META_VERSION not in meta or versions.META_CLIENT_CAPABILITIES not in meta:
        raise RpcError(INVALID_PARAMS, f"params._meta must carry {versions.META_VERSION} and {versions.META_CLIENT_CAPABILITIES}")
    version = meta[versions.META_VERSION]
    if not isinstance(meta[versions.META_CLIENT_CAPABILITIES], dict):
        raise RpcError(INVALID_PARAMS, f"{versions.META_CLIENT_CAPABILITIES} must be an object")
    if req.headers.get(versions.HEADER) != version:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version does not match the request's _meta protocol version")
    if req.headers.get(versions.METHOD_HEADER) != method:
        raise RpcError(HEADER_MISMATCH, "Header mismatch: Mcp-Method does not match the request's method")
    if method == "tools/call" and params.get("name") is not None:
        if _decode_header(req.headers.get(versions.NAME_HEADER)) != params.get("name"):
            raise RpcError(HEADER_MISMATCH, "Header mismatch: Mcp-Name does not match the tool name")
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, "the protocol version must be a string")
    if version not in versions.MODERN:
        raise RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                       {"supported": list(versions.SUPPORTED), "requested": version})
    return version


_B64 = re.compile(r"^=\?base64\?(.*)\?=$")


def _decode_header(value: str | None) -> str | None:
    """`Mcp-Name` may carry `=?base64?…?=` for values that are not plain ASCII."""
    if value is None:
        return None
    m = _B64.match(value)
    if m is None:
        return value
    try:
        return base64.b64decode(m.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _accepts_json(accept: str) -> bool:
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(types & {JSON, "application/*", "*/*"})
