"""The authorization server over HTTP, framework-free: the Lambda handler and the local
gateway both call `Facade.handle` with the request's parts and send back the `Answer`.

Nothing here logs but the login throttle (one line per wrong password, without the
password or the name typed): codes, tokens, secrets and passwords pass through only in
bodies and the `Location` header of the redirects."""

from __future__ import annotations

import hmac
import html
import json
import math
import secrets
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping
from urllib.parse import parse_qs, urlsplit

from . import cors
from .errors import OAuthError
from .server import AuthorizationServer, AuthRequest
from .throttle import LoginThrottle

AUTHORIZE, TOKEN, REGISTER, CALLBACK = "/oauth2/authorize", "/oauth2/token", "/oauth2/register", "/oauth2/callback"
METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
PATHS = (*METADATA_PATHS, AUTHORIZE, TOKEN, REGISTER, CALLBACK)
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
# answer any origin, without credentials (`cors`): what a browser-based client reaches first
CORS_METHODS = {**{p: "GET, OPTIONS" for p in METADATA_PATHS}, REGISTER: "POST, OPTIONS", TOKEN: "POST, OPTIONS"}
MAX_FORM = 16 * 1024
# Double-submit token of the consent page (AWS): `__Host-` keeps other hosts from setting
# it, SameSite=Lax keeps other sites' forms from sending it.
CONSENT_COOKIE = "__Host-xmemo-consent"

# username, password → the grant `complete` keeps (None: refused). Only the local gateway has one.
Login = Callable[[str, str], "dict[str, Any] | None"]
# (login id, Cognito's code) → the grant; only the AWS façade has one.
Callback = Callable[[str, str], "dict[str, Any]"]


@dataclass
class Answer:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, status: int, data: Any, headers: Mapping[str, str] | None = None) -> "Answer":
        return cls(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})

    @classmethod
    def page(cls, status: int, text: str, headers: Mapping[str, str] | None = None) -> "Answer":
        return cls(status, text.encode(), {"Content-Type": "text/html; charset=utf-8", **NO_STORE,
                                          "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
                                          "X-Frame-Options": "DENY", **(headers or {})})

    @classmethod
    def redirect(cls, location: str, status: int = 302) -> "Answer":
        return cls(status, b"", {"Location": location, **NO_STORE})


def form_of(body: bytes) -> dict[str, str]:
    """An x-www-form-urlencoded body; a repeated parameter is refused (RFC 6749 §3.1)."""
    parsed = parse_qs(body[:MAX_FORM].decode("utf-8", "replace"), keep_blank_values=True)
    if any(len(v) > 1 for v in parsed.values()):
        raise OAuthError("invalid_request", "a parameter is repeated")
    return {k: v[0] for k, v in parsed.items()}


class Facade:
    def __init__(self, server: AuthorizationServer, *, login: Login | None = None, callback: Callback | None = None,
                 extra_metadata: Mapping[str, Any] | None = None, throttle: LoginThrottle | None = None,
                 origins: frozenset[str] = frozenset()):
        self.server = server
        self._login = login
        self._callback = callback
        self._extra = dict(extra_metadata or {})
        self._throttle = throttle
        # where the login and consent pages are served from: a POST to them from any other
        # origin is a cross-site forgery (login CSRF, or consent clicked on someone's behalf)
        self.origins = frozenset(o.lower() for o in origins) | {origin_of(server.endpoints.issuer)}

    def handles(self, method: str, path: str) -> bool:
        return path in PATHS

    def handle(self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes, source: str) -> Answer:
        answer = self._route(method, path, query, headers, body, source)
        if path in CORS_METHODS:
            answer.headers.update(cors.ANSWER)
        return answer

    def _route(self, method: str, path: str, query: str, headers: Mapping[str, str], body: bytes, source: str) -> Answer:
        if method == "OPTIONS" and path in CORS_METHODS:
            return preflight(path)
        try:
            if path in METADATA_PATHS and method == "GET":
                return Answer.json(200, {**self.server.metadata(), **self._extra}, {"Cache-Control": "public, max-age=3600"})
            if path == AUTHORIZE and method == "GET":
                return self._authorize(form_of(query.encode()))
            if path == AUTHORIZE and method == "POST":
                self._same_origin(headers)
                form = form_of(body)
                return self._submit(form, source) if self._login is not None else self._consent(form, headers)
            if path == CALLBACK and method == "GET" and self._callback is not None:
                return self._upstream_return(form_of(query.encode()))
            if path == REGISTER and method == "POST":
                return self._register(body, source)
            if path == TOKEN and method == "POST":
                status, answer = self.server.token(form_of(body), _header(headers, "Authorization"))
                challenge = {"WWW-Authenticate": 'Basic realm="xmemo"'} if status == 401 else {}  # RFC 6749 §5.2
                return Answer.json(status, answer, {**NO_STORE, **challenge})
        except OAuthError as exc:
            if exc.location:
                return Answer.redirect(exc.location)
            if path in (AUTHORIZE, CALLBACK):
                return Answer.page(exc.status, _error_page(exc))
            return Answer.json(exc.status, exc.body(), NO_STORE)
        return Answer.json(405, {"error": "invalid_request", "error_description": f"{method} is not allowed here"})

    def _authorize(self, params: dict[str, str]) -> Answer:
        """The local form, or (AWS) a consent page first: the upstream login is the same for
        every client, and a person already logged in there would otherwise hand a code to
        any registered client without seeing which one asks (MCP security best practices,
        "confused deputy")."""
        txn, request, login_url = self.server.begin(params)
        if login_url is None:
            return Answer.page(200, login_page(txn, request))
        csrf = secrets.token_urlsafe(24)
        cookie = f"{CONSENT_COOKIE}={csrf}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={self.server.policy.pending_ttl}"
        return Answer.page(200, consent_page(txn, request, csrf), {"Set-Cookie": cookie})

    def _consent(self, form: dict[str, str], headers: Mapping[str, str]) -> Answer:
        txn = form.get("txn", "")
        request = self.server.pending(txn)
        if request is None:
            raise OAuthError("invalid_request", "this login expired or was already used; start again from the app", redirect=False)
        cookie = _cookie(_header(headers, "Cookie") or "", CONSENT_COOKIE)
        if not cookie or not hmac.compare_digest(cookie.encode(), form.get("csrf", "").encode()):
            raise OAuthError("access_denied", "this answer did not come from the consent page in this browser",
                             status=403, redirect=False)
        if form.get("decision") != "allow":
            return Answer.redirect(self.server.deny(txn, "access_denied", "the person declined"), 303)
        return Answer.redirect(str(self.server.upstream.login_url(txn, request)), 303)

    def _submit(self, form: dict[str, str], source: str) -> Answer:
        txn = form.get("txn", "")
        request = self.server.pending(txn)
        if request is None:
            raise OAuthError("invalid_request", "this login expired or was already used; start again from the app", redirect=False)
        username, password = form.get("username", ""), form.get("password", "")
        wait = self._throttle.wait(username, source) if self._throttle else 0
        if wait:
            message = f"Too many failed logins for this account or from this address. Try again in {_duration(wait)}."
            return Answer.page(429, login_page(txn, request, message), {"Retry-After": str(wait)})
        grant = self._login(username, password)  # type: ignore[misc]
        if grant is None:  # one answer whether or not the user exists
            if self._throttle:
                self._throttle.failed(username, source)
            if self.server.failed_login(txn):
                return Answer.redirect(self.server.deny(txn, "access_denied", "too many failed logins"), 303)
            return Answer.page(401, login_page(txn, request, "Wrong user name or password."))
        if self._throttle:
            self._throttle.succeeded(username)
        return Answer.redirect(self.server.complete(txn, grant), 303)

    def _same_origin(self, headers: Mapping[str, str]) -> None:
        """The form must come from this server's own page (OWASP: verifying the origin with
        standard headers): `Origin`, else the `Referer`'s origin. A request with neither
        comes from no browser page and passes (PKCE and the login id still bind it)."""
        origin = _header(headers, "Origin")
        if origin is None and (referer := _header(headers, "Referer")):
            origin = origin_of(referer)
        if origin is not None and origin.strip().lower() not in self.origins:
            raise OAuthError("access_denied", "this form was sent from another site", status=403, redirect=False)

    def _upstream_return(self, params: dict[str, str]) -> Answer:
        txn = params.get("state", "")
        if params.get("error") or not params.get("code"):
            return Answer.redirect(self.server.deny(txn, "access_denied", "the login was cancelled or refused"))
        return Answer.redirect(self.server.complete(txn, self._callback(txn, params["code"])))  # type: ignore[misc]

    def _register(self, body: bytes, source: str) -> Answer:
        try:
            data = json.loads(body or b"null")
        except ValueError:
            data = None
        answer = self.server.register(data, source)
        return Answer.json(201, answer, NO_STORE)


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL (the serialized origin), lower-case; "null" if none."""
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else "null"


def _duration(seconds: int) -> str:
    return f"{seconds} seconds" if seconds < 120 else f"{math.ceil(seconds / 60)} minutes"


def preflight(path: str) -> Answer:
    """The answer to a CORS preflight of `path`."""
    return Answer(204, b"", cors.preflight_headers(CORS_METHODS[path]))


def _header(headers: Mapping[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name.lower()), None)


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


def _error_page(exc: OAuthError) -> str:
    return (f"<!doctype html><title>XMemo login</title><h1>This login cannot continue</h1>"
            f"<p>{html.escape(exc.error)}: {html.escape(exc.description)}</p>")


def _asks(request: AuthRequest) -> str:
    e = html.escape
    return (f"<p><b>{e(request.client_id)}</b> asks for: {e(' '.join(request.scopes))}</p>"
            f"<p>It will be sent back to {e(request.redirect_uri)}</p>")


def consent_page(txn: str, request: AuthRequest, csrf: str) -> str:
    """Which client asks, for what, and where the answer goes, before the upstream login."""
    e = html.escape
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>XMemo: allow access?</title>
<style>body{{font-family:sans-serif;max-width:30rem;margin:4rem auto}}button{{margin:.4rem .4rem 0 0}}</style></head>
<body><h1>Allow access to your XMemo memories?</h1>
{_asks(request)}
<p>Allow only if you started this from that application.</p>
<form method="post" action="{AUTHORIZE}">
<input type="hidden" name="txn" value="{e(txn)}"><input type="hidden" name="csrf" value="{e(csrf)}">
<button type="submit" name="decision" value="allow">Allow and log in</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form></body></html>
"""


def login_page(txn: str, request: AuthRequest, message: str = "") -> str:
    """The local gateway's login form: `username` and `password`, posted back here."""
    e = html.escape
    note = f'<p role="alert">{e(message)}</p>' if message else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>XMemo login</title>
<style>body{{font-family:sans-serif;max-width:26rem;margin:4rem auto}}label,input,button{{display:block;margin:.4rem 0}}</style></head>
<body><h1>Log in to XMemo</h1>
{_asks(request)}{note}
<form method="post" action="{AUTHORIZE}">
<input type="hidden" name="txn" value="{e(txn)}">
<label>User name <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Log in</button>
</form></body></html>
"""
