"""A Client ID Metadata Document server on 127.0.0.1, as an MCP client would publish one:
each path answers what the test put there (body, status, headers, delay) and counts hits."""

from __future__ import annotations

import json
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class DocumentServer:
    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        """`tls`: serve HTTPS with this server context (clients that accept only https
        document URLs, such as Claude Code)."""
        self.pages: dict[str, tuple[int, bytes, dict[str, str], float]] = {}
        self.hits: dict[str, int] = {}
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.hits[self.path] = owner.hits.get(self.path, 0) + 1
                status, body, headers, delay = owner.pages.get(self.path, (404, b"", {}, 0.0))
                time.sleep(delay)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.base = f"{'https' if tls else 'http'}://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return self.base + path

    def serve(self, path: str, doc: Any = None, *, raw: bytes | None = None, status: int = 200,
              headers: dict[str, str] | None = None, delay: float = 0.0) -> str:
        body = raw if raw is not None else json.dumps(doc).encode()
        self.pages[path] = (status, body, {"Content-Type": "application/json", **(headers or {})}, delay)
        return self.url(path)

    def client_document(self, path: str, redirect_uris: list[str], **extra: Any) -> str:
        """A well-formed document naming itself."""
        url = self.url(path)
        return self.serve(path, {"client_id": url, "client_name": "CIMD test client", "redirect_uris": redirect_uris,
                                 "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                                 "token_endpoint_auth_method": "none", **extra})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
