"""A fault-injecting HTTP proxy in front of osmem-server: a real local component that
answers 429/503 (always, or for a share of requests), stalls, loses a response after the
write landed, or stops altogether (connections refused, open ones cut), so the store's
timeouts, retries and idempotence are tested over real sockets. Shared by
tests/opensearch (the adapter in-process) and tests/security (the gateway end to end)."""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import urlparse


class FaultProxy:
    def __init__(self, upstream: str):
        up = urlparse(upstream)
        self.upstream = (up.hostname, up.port)
        self.fail_status: int | tuple[int, ...] | None = None  # a tuple: one of them at random
        self.fail_count = 0
        self.fail_ratio = 1.0  # share of requests refused while fail_count lasts (throttling)
        self.fail_only: str | None = None  # refuse only requests whose path contains this
        self.fail_headers: dict[str, str] = {}  # sent with each refusal (e.g. Retry-After)
        self.delay = 0.0  # stall before forwarding
        self.jitter = 0.0  # plus up to this much, uniformly
        self.lose_responses = 0  # forward, then stall the answer this many times
        self.stall = 0.0
        # answers some requests itself: (method, path, body) -> (status, JSON bytes), or None to forward
        self.answer: Callable[[str, str, bytes | None], tuple[int, bytes] | None] | None = None
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.inflight = 0  # requests between arrival and answer
        self.connections: set[socket.socket] = set()
        self.stopped = False
        self.port = 0
        self._serve()

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def setup(self):
                super().setup()
                with proxy.lock:
                    proxy.connections.add(self.connection)

            def finish(self):
                with proxy.lock:
                    proxy.connections.discard(self.connection)
                try:
                    super().finish()
                except OSError:
                    pass

            def _handle(self):
                with proxy.lock:
                    proxy.inflight += 1
                try:
                    self._forward()
                finally:
                    with proxy.lock:
                        proxy.inflight -= 1

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                with proxy.lock:
                    if proxy.stopped:  # a request that raced stop(): the server is gone
                        self.close_connection = True
                        return
                    proxy.seen.append((self.command, self.path, dict(self.headers)))
                    fail = None
                    targeted = proxy.fail_only is None or proxy.fail_only in self.path
                    if proxy.fail_count > 0 and proxy.fail_status and targeted and random.random() < proxy.fail_ratio:
                        proxy.fail_count -= 1
                        statuses = proxy.fail_status if isinstance(proxy.fail_status, tuple) else (proxy.fail_status,)
                        fail = random.choice(statuses)
                    lose = proxy.lose_responses > 0 and self.command in ("PUT", "POST")
                    if lose:
                        proxy.lose_responses -= 1
                    pause = proxy.delay + random.random() * proxy.jitter
                if fail:
                    payload = json.dumps({"error": {"type": "rejected", "reason": "injected"}, "status": fail}).encode()
                    return self._reply(fail, payload, {"Content-Type": "application/json", **proxy.fail_headers})
                if pause:
                    time.sleep(pause)
                answered = proxy.answer(self.command, self.path, body) if proxy.answer else None
                if answered is not None:
                    return self._reply(answered[0], answered[1], {"Content-Type": "application/json"})
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
                except OSError:  # the client gave up, or stop() cut the connection
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        return Handler

    def _serve(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())  # SO_REUSEADDR: the same port again
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def fail(self, status: int | tuple[int, ...] | None, times: int, only: str | None = None) -> None:
        """Refuse the next `times` requests (those whose path contains `only`, if given)."""
        with self.lock:
            self.fail_status, self.fail_count, self.fail_only = status, times, only

    def stop(self) -> None:
        """The store stopped: new connections are refused, open ones are cut (a request in
        flight upstream may still land there; its answer is lost)."""
        with self.lock:
            self.stopped = True
        self.server.shutdown()
        self.server.server_close()
        with self.lock:
            open_ = list(self.connections)
        for conn in open_:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def start(self) -> None:
        """The store is back, on the same port."""
        with self.lock:
            self.stopped = False
        self._serve()

    def drain(self, timeout: float = 30.0) -> None:
        """Wait until no request is between arrival and answer (stalled writes have landed)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                if self.inflight == 0:
                    return
            time.sleep(0.02)
        raise AssertionError(f"{self.inflight} proxied requests still in flight after {timeout} s")

    def close(self) -> None:
        if not self.stopped:
            self.server.shutdown()
            self.server.server_close()
