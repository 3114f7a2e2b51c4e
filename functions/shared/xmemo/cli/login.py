"""`xmemo login --url <deployment>`: the MCP clients' flow from a terminal. It registers
itself (RFC 7591) with a loopback redirect URI, opens the authorization page, waits for
the redirect on 127.0.0.1, exchanges the code with its PKCE verifier and keeps only the
refresh token (`xmemo.credentials`). `xmemo logout` forgets it. No token is printed."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import sys
import threading
import webbrowser
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

DEFAULT_TIMEOUT_S = 300


def register(sub) -> None:
    p = sub.add_parser("login", help="log in to a deployment (or `xmemo serve`) and keep a refresh token")
    p.add_argument("--url", required=True, help="the deployment's base URL or MCP URL, e.g. http://127.0.0.1:8787")
    p.add_argument("--scope", action="append", default=[], help="scope to ask for (repeat; default: all the server offers)")
    p.add_argument("--no-browser", action="store_true", help="only print the URL to open")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds to wait for the login")
    p.set_defaults(func=run)
    out = sub.add_parser("logout", help="forget the stored login of a deployment")
    out.add_argument("--url", required=True)
    out.set_defaults(func=run_logout)


class _Callback(BaseHTTPRequestHandler):
    result: dict[str, str] = {}
    done: threading.Event

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        if parts.path != "/callback":
            self.send_error(404)
            return
        type(self).result = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        ok = "code" in self.result
        body = (b"<!doctype html><title>XMemo</title><p>Logged in. You can close this tab.</p>" if ok
                else b"<!doctype html><title>XMemo</title><p>The login did not complete; see the terminal.</p>")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.done.set()

    def log_message(self, *args: Any) -> None:  # the query holds the code: never logged
        pass


def run(args) -> int:
    from .. import credentials
    from ..credentials import LoginError, StoredLogin

    base = credentials.base_url(args.url)
    try:
        resource_meta, server = credentials.discover(base)
    except LoginError as exc:
        print(f"xmemo login: {exc}", file=sys.stderr)
        return 2
    handler = type("Callback", (_Callback,), {"done": threading.Event(), "result": {}})
    httpd = HTTPServer(("127.0.0.1", 0), handler)
    redirect_uri = f"http://127.0.0.1:{httpd.server_address[1]}/callback"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        scope = " ".join(args.scope) if args.scope else " ".join(resource_meta.get("scopes_supported") or [])
        status, reg = credentials.post_json(str(server["registration_endpoint"]), {
            "client_name": "xmemo CLI", "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "scope": scope})
        if status != 201 or "client_id" not in reg:
            print(f"xmemo login: registration refused ({reg.get('error') or status})", file=sys.stderr)
            return 2
        verifier = secrets.token_urlsafe(48)
        state = secrets.token_urlsafe(24)
        resource = str(resource_meta.get("resource") or f"{base}/mcp")
        url = str(server["authorization_endpoint"]) + "?" + urlencode({
            "response_type": "code", "client_id": reg["client_id"], "redirect_uri": redirect_uri, "state": state,
            "code_challenge": base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode(),
            "code_challenge_method": "S256", "resource": resource, "scope": scope})
        print(f"Open this URL to log in to {base}:\n{url}", flush=True)
        if not args.no_browser:
            webbrowser.open(url)
        if not handler.done.wait(args.timeout):
            print("xmemo login: no answer from the browser in time", file=sys.stderr)
            return 2
        result = handler.result
    finally:
        httpd.shutdown()
        httpd.server_close()
    if not hmac.compare_digest(result.get("state", ""), state):
        print("xmemo login: the answer does not belong to this login (state)", file=sys.stderr)
        return 2
    if "iss" in result and result["iss"] != server["issuer"]:  # RFC 9207: a mix-up would name another server
        print("xmemo login: the answer came from another authorization server (iss)", file=sys.stderr)
        return 2
    if "code" not in result:
        print(f"xmemo login: refused ({result.get('error', 'no code')}: {result.get('error_description', '')})", file=sys.stderr)
        return 2
    status, tokens = credentials.post_form(str(server["token_endpoint"]), {
        "grant_type": "authorization_code", "code": result["code"], "redirect_uri": redirect_uri,
        "client_id": reg["client_id"], "code_verifier": verifier, "resource": resource})
    if status != 200 or not tokens.get("refresh_token"):
        print(f"xmemo login: token exchange refused ({tokens.get('error') or status})", file=sys.stderr)
        return 2
    path = credentials.save(StoredLogin(url=base, token_endpoint=str(server["token_endpoint"]), client_id=reg["client_id"],
                                        refresh_token=tokens["refresh_token"], scope=str(tokens.get("scope", scope)),
                                        resource=resource))
    print(f"Logged in to {base} ({tokens.get('scope', scope)}); the refresh token is in {path} (owner-only).")
    return 0


def run_logout(args) -> int:
    from .. import credentials

    if credentials.forget(args.url):
        print(f"Logged out of {credentials.base_url(args.url)}.")
        return 0
    print(f"No stored login for {credentials.base_url(args.url)}.")
    return 1
