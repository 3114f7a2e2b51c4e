"""The ways a test reaches the tools with a real signed token: the local gateway in-process
(token verification, scope check, proxy event, the real handler; no socket, so thousands
of cases stay fast) and the local gateway over real HTTP, on either store; `McpFull` sends
the same calls as MCP `tools/call` through either."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

import httpx

from xmemo import api
from xmemo.config import Settings
from xmemo.local.keys import SigningKey
from xmemo.local.server import Gateway, Request
from xmemo.local.tokens import issue_token
from xmemo.services import Services

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    text: str
    wire: str = ""  # what was actually on the wire when `text` is derived from it (MCP)

    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def raw(self) -> str:
        """Everything a client could read: headers and body."""
        return "\n".join(f"{k}: {v}" for k, v in self.headers.items()) + "\n" + self.text + "\n" + self.wire


class Surface(Protocol):
    name: str
    db_path: Path

    def token(self, sub: str, scopes: list[str], teams: list[str]) -> str: ...

    def call(self, token: str, method: str, path: str, *, query: dict | None = None, body: Any = None) -> Answer: ...


def _query(query: dict | None) -> str:
    return urlencode(query or {}, doseq=True)


class InProcessGateway:
    """`Gateway.handle` in this process, its handlers bound to `svc` (a SQLite file)."""

    name = "rest-inprocess"

    def __init__(self, svc: Services, data_dir: Path):
        self.svc = svc
        self.db_path = Path(getattr(svc.store, "path", data_dir / "xmemo.sqlite3"))
        self.store = svc.store
        settings = Settings(data_dir=data_dir, embedder="none", port=1)
        self.settings = settings
        self.gateway = Gateway(settings, ROOT / "template.yaml", pool_size=1)
        self.key = SigningKey(data_dir)

    def token(self, sub: str, scopes: list[str], teams: list[str]) -> str:
        return issue_token(self.settings, self.key, scopes=scopes, sub=sub, teams=teams)

    def call(self, token: str, method: str, path: str, *, query: dict | None = None, body: Any = None, headers: dict | None = None) -> Answer:
        data = json.dumps(body).encode() if body is not None else b""
        headers = {"Host": f"127.0.0.1:{self.settings.port}", "Authorization": f"Bearer {token}", "Content-Type": "application/json",
                   "Content-Length": str(len(data)), **(headers or {})}
        with api.using_services(self.svc):
            reply = self.gateway.handle(Request(method, path, _query(query), headers, data))
        return Answer(reply.status, reply.headers, reply.body.decode("utf-8"))


class OpenSearchIndex:
    """Where `stored_in` reads the ground truth of a gateway on the OpenSearch store: a bare
    opensearch-py client on the server itself and the alias the gateway writes through
    (the same `.client` / `.alias` an in-process `OpenSearchStore` offers)."""

    def __init__(self, url: str, alias: str = Settings.model_fields["opensearch_alias"].default):
        from opensearchpy import OpenSearch

        self.client = OpenSearch(hosts=[url], timeout=30)
        self.alias = alias


class HttpGateway:
    """The `xmemo serve` subprocess of `xmemo.local.spawn`, over a keep-alive HTTP connection.
    `store`: its ground truth when it is not the SQLite file (an `OpenSearchIndex`)."""

    name = "rest-http"

    def __init__(self, gw, store: OpenSearchIndex | None = None):
        self.gw = gw
        self.db_path = gw.settings.data_dir / "xmemo.sqlite3"
        self.store = store
        self.client = httpx.Client(base_url=gw.url, timeout=30)

    def token(self, sub: str, scopes: list[str], teams: list[str]) -> str:
        return self.gw.token(sub, *scopes, teams=teams)

    def call(self, token: str, method: str, path: str, *, query: dict | None = None, body: Any = None, headers: dict | None = None) -> Answer:
        r = self.client.request(
            method, path, params=_query(query) or None, json=body, headers={"Authorization": f"Bearer {token}", **(headers or {})}
        )
        return Answer(r.status_code, dict(r.headers), r.text)

    def close(self) -> None:
        self.client.close()


class McpFull:
    """The same calls as tools/call on `POST /mcp/full` (structured output), through another
    surface's transport: each REST call is mapped to its tool, and the tool result is
    mapped back (an `isError` result `Error <status> <code>: <message>` becomes that status
    and a SPEC §6 body) so the same model checks both. The leak scan sees the raw reply."""

    VERSION = "2025-06-18"

    def __init__(self, transport):
        self.t = transport
        self.name = transport.name.replace("rest", "mcp")
        self.db_path = transport.db_path
        self.store = getattr(transport, "store", None)
        self._ids = 0

    def token(self, sub: str, scopes: list[str], teams: list[str]) -> str:
        return self.t.token(sub, scopes, teams)

    @staticmethod
    def tool_of(method: str, path: str, query: dict | None, body: Any) -> tuple[str, dict]:
        if path.startswith("/v1/memories/"):
            return ("get_memory" if method == "GET" else "forget"), {"reference": path.rsplit("/", 1)[1]}
        if (method, path) == ("GET", "/v1/memories"):
            args = dict(query or {})
            if "include_temporary" in args:
                args["include_temporary"] = args["include_temporary"] == "true"
            if "tags" in args and not isinstance(args["tags"], list):
                args["tags"] = [args["tags"]]
            return "list_memories", args
        name = {"/v1/memories": "remember", "/v1/recall": "recall", "/v1/search": "search_memory", "/v1/context": "recall_context", "/v1/forget": "forget"}[path]
        return name, dict(body or {})

    def call(self, token: str, method: str, path: str, *, query: dict | None = None, body: Any = None) -> Answer:
        name, args = self.tool_of(method, path, query, body)
        self._ids += 1
        rpc = {"jsonrpc": "2.0", "id": self._ids, "method": "tools/call", "params": {"name": name, "arguments": args}}
        a = self.t.call(token, "POST", "/mcp/full", body=rpc, headers={"MCP-Protocol-Version": self.VERSION, "Accept": "application/json"})
        if a.status != 200:  # the gateway's own answer (401/403): already SPEC §6
            return a
        result = json.loads(a.text)["result"]
        if result.get("isError"):
            text = result["content"][0]["text"]
            head, _, message = text.partition(": ")
            _, status, code = head.split(" ", 2)
            return Answer(int(status), a.headers, json.dumps({"error": {"code": code, "message": message}}), wire=a.text)
        data = result["structuredContent"]
        status = 201 if name == "remember" and not data["duplicate"] else 200
        return Answer(status, a.headers, json.dumps(data), wire=a.text)


def stored(db_path: Path) -> dict[str, tuple[str, int]]:
    """reference → (holder, has an FTS row), read straight from the SQLite file: the ground
    truth of what is stored, independent of the store's own read code."""
    if not Path(db_path).exists():  # the gateway opens its store on the first tool call
        return {}
    conn = sqlite3.connect(db_path, timeout=30)  # read only by use: a `mode=ro` open of a live WAL file can fail
    try:
        rows = conn.execute(
            "SELECT m.reference, m.holder, (SELECT count(*) FROM memories_fts f WHERE f.rowid = m.rowid) FROM memories m"
        ).fetchall()
    finally:
        conn.close()
    return {ref: (holder, fts) for ref, holder, fts in rows}


def stored_in(surface) -> dict[str, tuple[str, int]]:
    """Ground truth of what the surface's store holds: the SQLite file, or every document
    of the OpenSearch alias read with a bare match_all (not through the store's filters)."""
    store = getattr(surface, "store", None)
    if store is None or not hasattr(store, "alias"):
        return stored(surface.db_path)
    if not store.client.indices.exists_alias(name=store.alias):  # created on the first write
        return {}
    store.client.indices.refresh(index=store.alias)
    hits = store.client.search(index=store.alias, body={"query": {"match_all": {}}, "size": 10000, "_source": ["reference", "holder"]})
    return {h["_source"]["reference"]: (h["_source"]["holder"], 1) for h in hits["hits"]["hits"]}
