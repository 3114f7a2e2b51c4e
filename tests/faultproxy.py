"""A fault-injecting HTTP proxy in front of osmem-server: a real local component that
answers 429/503, stalls, or loses a response after the write landed, so the store's
timeouts, retries and idempotence are tested over real sockets. Shared by tests/opensearch
(the adapter in-process) and tests/security (the gateway end to end)."""

from __future__ import annotations

import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse


class FaultProxy:
    def __init__(self, upstream: str):
        up = urlparse(upstream)
        self.upstream = (up.hostname, up.port)
        self.fail_status: int | None = None
        self.fail_count = 0
        self.delay = 0.0  # stall before forwarding
        self.lose_responses = 0  # forward, then stall the answer this many times
        self.stall = 0.0
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                with proxy.lock:
                    proxy.seen.append((self.command, self.path, dict(self.headers)))
                    fail = proxy.fail_count > 0 and proxy.fail_status
                    if fail:
                        proxy.fail_count -= 1
                    lose = proxy.lose_responses > 0 and self.command in ("PUT", "POST")
                    if lose:
                        proxy.lose_responses -= 1
                if fail:
                    payload = json.dumps({"error": {"type": "rejected", "reason": "injected"}, "status": fail}).encode()
                    return self._reply(fail, payload, {"Content-Type": "application/json"})
                if proxy.delay:
                    time.sleep(proxy.delay)
                conn = http.client.HTTPConnection(*proxy.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                if lose:
                    time.sleep(proxy.stall)
                self._reply(resp.status, data, {"Content-Type": resp.getheader("Content-Type") or "application/json"})

            def _reply(self, status, data, headers):
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def fail(self, status: int, times: int) -> None:
        with self.lock:
            self.fail_status, self.fail_count = status, times

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
