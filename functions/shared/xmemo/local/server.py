"""The local gateway: API Gateway + Cognito authorizer + Lambda, on 127.0.0.1.

For every route of `template.yaml` it verifies the bearer token (401 like API Gateway),
checks the route's scopes (403 `insufficient_scope`), builds the REST proxy event with the
claims as strings, and invokes the same handler a Lambda would run. It also serves the
pieces of Cognito that clients need locally (the JWKS), and the MCP authorization
server (`xmemo.oauth`: metadata, registration, a login form, `POST /oauth2/token`)."""

from __future__ import annotations

import base64
import json
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import unquote, urlsplit

from ..api import error_body
from ..config import Settings
from ..errors import InsufficientScope, Unauthorized
from .clients import ClientRegistry
from .events import claims_as_strings, rest_event
from .functions import FunctionMissing, FunctionPool
from .keys import SigningKey
from .oauth import local_facade
from .template import Route, routes_of
from .tokens import VerifiedTokens, issuer_of
from .workers import HandlerCrashed, WorkerPool

MAX_BODY = 10 * 1024 * 1024  # API Gateway's payload limit
HOST = "127.0.0.1"


@dataclass
class Reply:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, data: Any, headers: Mapping[str, str] | None = None) -> "Reply":
        return cls(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})


@dataclass
class Request:
    method: str
    path: str
    query: str
    headers: Mapping[str, str]  # as received (case preserved)
    body: bytes

    def header(self, name: str) -> str | None:
        lower = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lower), None)


class Gateway:
    """Routing, authorization and invocation, independent of the HTTP server."""

    def __init__(self, settings: Settings, template: Path, pool_size: int = 8, workers: int = 1):
        self.settings = settings
        self.template = template
        self.routes = routes_of(template, {"ResourceServerId": settings.resource_server})
        self.key = SigningKey(settings.data_dir)
        self.clients = ClientRegistry(settings.data_dir)
        self.verified = VerifiedTokens()
        self._pools: dict[str, FunctionPool] = {}
        self._pool_size = pool_size
        self._pools_lock = threading.Lock()
        # several workers: each invocation runs in the next idle worker process; one: here
        self._workers = WorkerPool(self.routes, workers) if workers > 1 else None
        # Gateway-owned endpoints (not Lambda routes): (method, path) → handler.
        self.endpoints: dict[tuple[str, str], Callable[[Request], Reply]] = {
            ("GET", "/.well-known/jwks.json"): lambda _r: Reply.json(200, self.key.jwks()),
            ("GET", "/openapi.json"): self._openapi,
        }
        self._openapi_doc: bytes | None = None
        self.oauth = local_facade(settings, self.key, self.clients, self.base_url)

    @property
    def issuer(self) -> str:
        return issuer_of(self.settings)

    # -- routing ---------------------------------------------------------------------------
    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method == method and (m := route.pattern.match(path)):
                return route, {k: unquote(v) for k, v in m.groupdict().items()}
        return None

    def pool(self, route: Route) -> FunctionPool:
        with self._pools_lock:
            if route.function not in self._pools:
                self._pools[route.function] = FunctionPool(route, self._pool_size)
            return self._pools[route.function]

    def handle(self, req: Request) -> Reply:
        if self.oauth.handles(req.method, req.path):  # the authorization server, before any template route
            answer = self.oauth.handle(req.method, req.path, req.query, req.headers, req.body, source="loopback")
            return Reply(answer.status, answer.body, answer.headers)
        endpoint = self.endpoints.get((req.method, req.path))
        if endpoint is not None:
            return endpoint(req)
        found = self.match(req.method, req.path)
        if found is None:
            return Reply.json(404, error_body("not_found", "no such route"))
        route, params = found
        if route.resource.startswith("/mcp") and (refused := self._rebinding(req)) is not None:
            return refused
        claims = None
        if route.authorized:
            try:
                claims = self.authorize(route, req.header("Authorization"))
            except Unauthorized as exc:
                return self.unauthorized(route, exc)
            except InsufficientScope as exc:
                return Reply.json(403, error_body(exc.code, exc.message, exc.details))
        return self.invoke(route, params, req, claims)

    # -- the authorizer --------------------------------------------------------------------
    def authorize(self, route: Route, header: str | None) -> dict[str, Any]:
        """Verified claims for `route`, or Unauthorized / InsufficientScope."""
        if not header:
            raise Unauthorized("no bearer token")
        token = header[7:].strip() if header[:7].lower() == "bearer " else header.strip()
        claims = self.verified.verify(token, self.settings, self.key, self.clients)
        granted = set(str(claims.get("scope", "")).split())
        if route.scopes and not granted.intersection(route.scopes):
            raise InsufficientScope(" or ".join(route.scopes))
        return claims

    def unauthorized(self, route: Route, exc: Unauthorized) -> Reply:
        """API Gateway's 401, in the SPEC §6 body shape, naming the RFC 9728 resource
        metadata as MCP clients expect (the MCP endpoints have their own document)."""
        resource = route.resource if route.resource.startswith("/mcp") else ""
        metadata = f"{self.base_url}/.well-known/oauth-protected-resource{resource}"
        challenge = f'Bearer realm="xmemo", resource_metadata="{metadata}"'
        return Reply.json(401, error_body("unauthorized", exc.message), {"WWW-Authenticate": challenge})

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.settings.port}"

    def _rebinding(self, req: Request) -> Reply | None:
        """DNS-rebinding protection on /mcp (MCP transports §security): the Host must be
        the loopback address served, and a browser's Origin must be that same origin."""
        port = self.settings.port
        hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        host, origin = (req.header("Host") or "").lower(), req.header("Origin")
        if host not in hosts or (origin is not None and origin.rstrip("/").lower() not in {f"http://{h}" for h in hosts}):
            body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Forbidden: Host or Origin is not this local server"}}
            return Reply.json(403, body)
        return None

    # -- the Lambda integration ------------------------------------------------------------
    def invoke(self, route: Route, params: dict[str, str], req: Request, claims: dict[str, Any] | None) -> Reply:
        try:
            text = req.body.decode("utf-8") if req.body else None
            b64 = False
        except UnicodeDecodeError:
            text, b64 = base64.b64encode(req.body).decode(), True
        event = rest_event(
            req.method,
            route.resource,
            req.path,
            path_parameters=params,
            query=req.query,
            headers=req.headers,  # as API Gateway does, Authorization included
            body=text,
            claims=claims_as_strings(claims) if claims is not None else None,
        )
        event["isBase64Encoded"] = b64
        try:
            result = self._workers.invoke(route, event) if self._workers else self.pool(route).invoke(event)
        except FunctionMissing as exc:
            print(f"xmemo gateway: {exc}", file=sys.stderr)
            return Reply.json(502, error_body("internal", "the function behind this route is not deployed"))
        except HandlerCrashed as exc:  # in a worker process: it sent its own trace
            print(f"xmemo gateway: {route.function} raised {exc}", file=sys.stderr)
            return Reply.json(502, error_body("internal", "internal server error"))
        except Exception as exc:  # a Lambda crash: API Gateway answers 502
            frames = "".join(traceback.format_tb(exc.__traceback__)[-3:])
            print(f"xmemo gateway: {route.function} raised {type(exc).__name__}\n{frames}", file=sys.stderr)
            return Reply.json(502, error_body("internal", "internal server error"))
        return self._lambda_reply(result)

    def close(self) -> None:
        """Stop the worker processes, if any."""
        if self._workers is not None:
            self._workers.close()

    @staticmethod
    def _lambda_reply(result: Mapping[str, Any]) -> Reply:
        headers = {k: str(v) for k, v in (result.get("headers") or {}).items()}
        for k, values in (result.get("multiValueHeaders") or {}).items():
            headers[k] = ", ".join(str(v) for v in values)
        body = result.get("body") or ""
        data = base64.b64decode(body) if result.get("isBase64Encoded") else body.encode("utf-8")
        return Reply(int(result.get("statusCode", 200)), data, headers)

    # -- public documents --------------------------------------------------------------
    def _openapi(self, _req: Request) -> Reply:
        """The REST API's OpenAPI 3.1 document (public, like a published spec), built once."""
        if self._openapi_doc is None:
            from ..openapi import build_openapi

            doc = build_openapi(self.routes, self.issuer)
            self._openapi_doc = json.dumps(doc).encode()
        return Reply(200, self._openapi_doc, {"Content-Type": "application/json"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # keep-alive + header/body writes would wait on delayed ACKs (~40 ms)
    server_version = "xmemo-local-gateway"
    timeout = 60  # seconds a socket may stay silent (slow or stalled bodies), then it is closed
    gateway: Gateway  # set on the subclass made by make_server
    quiet: bool = False

    def _dispatch(self) -> None:
        started = time.perf_counter()
        parts = urlsplit(self.path)
        refusal = self._refuse_body()
        if refusal is not None:  # refused before a byte of the body is read or parsed
            reply = Reply.json(400, self._refusal_body(parts.path, refusal), {"Connection": "close"})
            self.close_connection = True
            self._drain()
            length = 0
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            req = Request(self.command, parts.path, parts.query, dict(self.headers.items()), body)
            try:
                reply = self.gateway.handle(req)
            except Exception as exc:  # the gateway itself must never leak a trace
                print(f"xmemo gateway: {type(exc).__name__} in gateway", file=sys.stderr)
                reply = Reply.json(500, error_body("internal", "internal server error"))
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)
        if not self.quiet:  # method, path and status only: never tokens, bodies or queries
            ms = (time.perf_counter() - started) * 1000
            print(f"{self.command} {parts.path} {reply.status} {ms:.1f}ms", file=sys.stderr, flush=True)

    def _refuse_body(self) -> str | None:
        """Why the body cannot be accepted (framing or size), or None. SPEC §6 has no 413,
        so an oversized body is `400 invalid_request`; the connection is closed after it."""
        if self.headers.get("Transfer-Encoding"):
            return "chunked request bodies are not supported; send Content-Length"
        raw = (self.headers.get("Content-Length") or "0").strip()
        if not raw.isdigit():
            return "invalid Content-Length"
        limit = min(MAX_BODY, self.gateway.settings.max_body_bytes)
        if int(raw) > limit:
            return f"the request body exceeds {limit} bytes"
        return None

    @staticmethod
    def _refusal_body(path: str, reason: str) -> dict[str, Any]:
        """SPEC §6 body on REST routes; a JSON-RPC error on MCP routes (SPEC §6: over MCP,
        protocol errors are JSON-RPC errors)."""
        if path == "/mcp" or path.startswith("/mcp/"):
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": f"Invalid Request: {reason}"}}
        return error_body("invalid_request", reason)

    def _drain(self) -> None:
        """Discard (never buffer or parse) a refused body of up to API Gateway's 10 MB, so
        the client, still sending, reads the 400 instead of a reset connection."""
        raw = (self.headers.get("Content-Length") or "").strip()
        left = int(raw) if raw.isdigit() and int(raw) <= MAX_BODY else 0
        while left > 0:
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                return
            left -= len(chunk)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _dispatch

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - our own access log instead
        pass


class GatewayServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request, client_address) -> None:
        """A client that hung up before its answer was written (a health poll that timed
        out while the gateway was starting under load) is not a gateway error: no trace."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def make_server(settings: Settings, template: Path, *, quiet: bool = False, pool_size: int = 8) -> tuple[GatewayServer, Gateway]:
    """Bind 127.0.0.1:`settings.port` (0 = a free port; the issuer then follows it), with
    `settings.gateway_workers` worker processes when there are more than one."""
    server = GatewayServer((HOST, settings.port), _Handler)
    port = server.server_address[1]
    if settings.port != port and settings.issuer is None:
        settings = settings.model_copy(update={"port": port})
    gateway = Gateway(settings, template, pool_size, settings.gateway_workers)
    server.RequestHandlerClass = type("Handler", (_Handler,), {"gateway": gateway, "quiet": quiet})
    return server, gateway
