"""`xmemo mcp-stdio`: a stdio bridge for MCP clients that only launch local servers.

It reads newline-delimited JSON-RPC messages on stdin, POSTs each to the HTTP endpoint
with the bearer token and the headers the revision wants (`MCP-Protocol-Version`, and on
2026-07-28 `Mcp-Method` / `Mcp-Name`), and writes each answer as one line on stdout.
The token is a fixed one (`--token` / `XMEMO_TOKEN`), else one that refreshes itself
(`xmemo.credentials`: client credentials from `XMEMO_CLIENT_ID` / `XMEMO_CLIENT_SECRET`,
or the stored `xmemo login`), renewed before it expires and once more after a 401.
Diagnostics go to stderr; the token and message contents are never printed."""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import urllib.error
import urllib.request
from typing import IO, Any, Callable

from ..credentials import LoginError, TokenSource
from ..mcp import versions

TIMEOUT_S = 60


def register(sub) -> None:
    p = sub.add_parser("mcp-stdio", help="bridge MCP over stdio to an XMemo HTTP endpoint")
    p.add_argument("--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8787/mcp")
    p.add_argument("--token", default=os.environ.get("XMEMO_TOKEN"),
                   help="a fixed bearer access token (default: $XMEMO_TOKEN; without one, client credentials from "
                   "$XMEMO_CLIENT_ID/$XMEMO_CLIENT_SECRET or the stored `xmemo login`, refreshed as needed)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.token:
        Bridge(args.url, args.token).serve(sys.stdin, sys.stdout)
        return 0
    try:
        source = TokenSource.for_url(args.url)
        source.token()  # fail now, not at the client's first message
    except LoginError as exc:
        print(f"xmemo mcp-stdio: {exc} (or pass --token / set XMEMO_TOKEN)", file=sys.stderr)
        return 2
    Bridge(args.url, source).serve(sys.stdin, sys.stdout)
    return 0


class Bridge:
    def __init__(self, url: str, token: "str | TokenSource"):
        self.url = url
        # fixed: the same token every time; a TokenSource: fresh, and forced once after a 401
        self._token: Callable[..., str] = (lambda force=False: token) if isinstance(token, str) else token.token
        self._renewable = not isinstance(token, str)
        self.version: str | None = None  # negotiated by `initialize` (legacy revisions)

    def serve(self, inp: IO[str], out: IO[str]) -> None:
        for line in inp:
            line = line.strip()
            if not line:
                continue
            reply = self.forward(line)
            if reply is not None:
                out.write(reply + "\n")
                out.flush()

    def headers_for(self, message: Any, *, renew: bool = False) -> dict[str, str]:
        headers = {
            "Authorization": f"Bearer {self._token(force=renew)}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        if not isinstance(message, dict):
            if self.version:
                headers["MCP-Protocol-Version"] = self.version
            return headers
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        modern = meta.get(versions.META_VERSION)
        if isinstance(modern, str):
            headers["MCP-Protocol-Version"] = modern
            headers["Mcp-Method"] = str(message.get("method", ""))
            name = params.get("name") if message.get("method") == "tools/call" else None
            if isinstance(name, str):
                headers["Mcp-Name"] = name if name.isascii() and name.isprintable() else _b64(name)
        elif self.version and message.get("method") != "initialize":
            headers["MCP-Protocol-Version"] = self.version
        return headers

    def forward(self, line: str) -> str | None:
        """POST one line; the line to write back, or None (202, or a notification's failure)."""
        try:
            message = json.loads(line)
        except ValueError:
            message = None  # let the server answer -32700
        try:
            status, body = self._post(line, message)
            if status == 401 and self._renewable:  # revoked or expired early: one fresh token, one retry
                status, body = self._post(line, message, renew=True)
        except LoginError as exc:
            return self._failure(message, str(exc))
        except (urllib.error.URLError, OSError) as exc:
            return self._failure(message, f"XMemo endpoint unreachable: {type(exc).__name__}")
        if status == 202 or not body:
            return None
        try:
            answer = json.loads(body)
        except ValueError:
            return self._failure(message, f"HTTP {status} without a JSON body")
        if isinstance(answer, list) or isinstance(answer, dict) and answer.get("jsonrpc") == "2.0":
            self._remember_version(message, answer)
            return json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        detail = (answer.get("error") or {}).get("message") if isinstance(answer, dict) else None
        return self._failure(message, f"HTTP {status}: {detail or 'request refused'}")

    def _post(self, line: str, message: Any, *, renew: bool = False) -> tuple[int, str]:
        request = urllib.request.Request(self.url, data=line.encode("utf-8"), method="POST",
                                         headers=self.headers_for(message, renew=renew))
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as resp:
                return resp.status, resp.read().decode("utf-8")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode("utf-8", errors="replace")

    def _remember_version(self, message: Any, answer: Any) -> None:
        if isinstance(message, dict) and message.get("method") == "initialize" and isinstance(answer, dict):
            version = (answer.get("result") or {}).get("protocolVersion")
            if isinstance(version, str):
                self.version = version

    def _failure(self, message: Any, text: str) -> str | None:
        """Answer a request the endpoint did not answer in JSON-RPC, so the client never hangs."""
        print(f"xmemo mcp-stdio: {text}", file=sys.stderr)
        if isinstance(message, dict) and "method" in message and "id" in message:
            return json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603, "message": text}})
        return None


def _b64(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="
