"""The concurrent clients of the fault tests (test_faults.py on SQLite,
test_faults_opensearch.py on OpenSearch): each writes unique markers through the gateway
and records what every call answered and how long it took, so a test can check the
deadline bound, the SPEC §6 refusal and, after recovery, exactly-once storage."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import httpx

from xmemo.local.template import routes_of

from . import cases

ROOT = Path(__file__).resolve().parents[2]
# The generous bound of every call: the functions' Lambda timeout in template.yaml.
LAMBDA_TIMEOUT_S = float(max(r.timeout for r in routes_of(ROOT / "template.yaml", {"ResourceServerId": "xmemo"})))
MCP_VERSION = "2025-06-18"


def content_of(marker: str) -> str:
    return f"fault run write {marker}"


def marker_of(content: str) -> str:
    return content.split()[-1]


class Writers:
    """Concurrent clients writing unique markers; what each call answered, and how fast.

    With `mcp=True` every other client writes with `tools/call remember` on `/mcp/full`
    instead of `POST /v1/memories`. References put in `pool` are superseded, one per
    write, by the next writes (`supersedes`)."""

    def __init__(self, url: str, token: str, *, label: str = "faults[{}]", mcp: bool = False):
        self.url, self.token, self.label, self.mcp = url, token, label, mcp
        self.acked: dict[str, str] = {}  # marker → reference of a 201
        self.refused: dict[str, dict] = {}  # marker → body of a write answered 503 store_unavailable
        self.unknown: set[str] = set()  # no answer (connection died): may or may not be stored
        self.supersedes: dict[str, str] = {}  # marker → the reference its write superseded
        self.pool: list[str] = []
        self.slowest = 0.0
        self.reads = 0
        self.lock = threading.Lock()
        self._rpc_ids = 0

    def run(self, n: int, clients: int, reads: bool = True, stop: threading.Event | None = None, read_every: int = 1) -> None:
        """`n` writes over `clients` clients (or until `stop`), each client searching
        after every `read_every`-th of its writes when `reads`."""
        markers = iter([f"m{uuid.uuid4().hex}" for _ in range(n)])

        def client(i: int) -> None:
            over_mcp = self.mcp and i % 2 == 1
            written = 0
            with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=LAMBDA_TIMEOUT_S * 2) as http:
                while stop is None or not stop.is_set():
                    with self.lock:
                        marker = next(markers, None)
                        old = self.pool.pop() if marker and self.pool else None
                    if marker is None:
                        return
                    body = {"content": content_of(marker), "bucket": "faults"}
                    if old:
                        body["supersedes"] = old
                        with self.lock:
                            self.supersedes[marker] = old
                    (self._write_mcp if over_mcp else self._write)(http, marker, body)
                    written += 1
                    if reads and written % read_every == 0:
                        self._read(http)

        with ThreadPoolExecutor(clients) as pool:
            for f in [pool.submit(client, i) for i in range(clients)]:
                f.result()

    def background(self, n: int, clients: int, **kw) -> Future:
        """`run` in a thread. Its future's `result()` re-raises whatever a client asserted
        (a plain Thread would only print it, and the test would pass)."""
        executor = ThreadPoolExecutor(1)
        future = executor.submit(self.run, n, clients, **kw)
        executor.shutdown(wait=False)
        return future

    def _timed(self, fn):
        started = time.monotonic()
        try:
            return fn()
        finally:
            elapsed = time.monotonic() - started
            with self.lock:
                self.slowest = max(self.slowest, elapsed)

    def _write(self, http: httpx.Client, marker: str, body: dict) -> None:
        try:
            r = self._timed(lambda: http.post("/v1/memories", json=body))
        except httpx.TransportError:
            with self.lock:
                self.unknown.add(marker)
            return
        with self.lock:
            if r.status_code == 201:
                self.acked[marker] = r.json()["memory"]["reference"]
            elif r.status_code == 503:
                check_503(r)
                self.refused[marker] = body
            else:
                raise AssertionError(f"write answered {r.status_code}: {r.text[:300]}")
        cases.record(self.label.format("writes"))

    def _write_mcp(self, http: httpx.Client, marker: str, body: dict) -> None:
        with self.lock:
            self._rpc_ids += 1
            rpc = {"jsonrpc": "2.0", "id": self._rpc_ids, "method": "tools/call", "params": {"name": "remember", "arguments": body}}
        headers = {"MCP-Protocol-Version": MCP_VERSION, "Accept": "application/json"}
        try:
            r = self._timed(lambda: http.post("/mcp/full", json=rpc, headers=headers))
        except httpx.TransportError:
            with self.lock:
                self.unknown.add(marker)
            return
        assert r.status_code == 200, f"MCP write answered HTTP {r.status_code}: {r.text[:300]}"
        assert "result" in r.json(), f"MCP write answered a JSON-RPC error: {r.text[:300]}"
        result = r.json()["result"]
        with self.lock:
            if not result.get("isError"):
                assert not result["structuredContent"]["duplicate"], r.text[:300]
                self.acked[marker] = result["structuredContent"]["memory"]["reference"]
            else:
                # SPEC §6 over MCP: a tool result whose text starts `Error <status> <code>: <message>`
                text = result["content"][0]["text"]
                assert text.startswith("Error 503 store_unavailable: ") and len(text) > 29, r.text[:300]
                self.refused[marker] = body
        cases.record(self.label.format("mcp writes"))

    def _read(self, http: httpx.Client) -> None:
        try:
            r = self._timed(lambda: http.post("/v1/search", json={"query": "fault run write", "limit": 5}))
        except httpx.TransportError:
            return
        assert r.status_code in (200, 503), r.text[:300]
        if r.status_code == 503:
            check_503(r)
        with self.lock:
            self.reads += 1
        cases.record(self.label.format("reads"))


def check_503(r: httpx.Response) -> None:
    body = r.json()
    assert body["error"]["code"] == "store_unavailable" and isinstance(body["error"]["message"], str), r.text
    assert int(r.headers["Retry-After"]) >= 1, r.headers
