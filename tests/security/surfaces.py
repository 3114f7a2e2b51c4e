"""The ways a test reaches the tools with a real signed token: the local gateway in-process
(token verification, scope check, proxy event, the real handler; no socket, so thousands
of cases stay fast) and the local gateway over real HTTP. The MCP surface joins here."""

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

    def json(self) -> Any:
        return json.loads(self.text)

    @property
    def raw(self) -> str:
        """Everything a client could read: headers and body."""
        return "\n".join(f"{k}: {v}" for k, v in self.headers.items()) + "\n" + self.text


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
        settings = Settings(data_dir=data_dir, embedder="none", port=1)
        self.settings = settings
        self.gateway = Gateway(settings, ROOT / "template.yaml", pool_size=1)
        self.key = SigningKey(data_dir)

    def token(self, sub: str, scopes: list[str], teams: list[str]) -> str:
        return issue_token(self.settings, self.key, scopes=scopes, sub=sub, teams=teams)

    def call(self, token: str, method: str, path: str, *, query: dict | None = None, body: Any = None) -> Answer:
        data = json.dumps(body).encode() if body is not None else b""
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Content-Length": str(len(data))}
        with api.using_services(self.svc):
            reply = self.gateway.handle(Request(method, path, _query(query), headers, data))
        return Answer(reply.status, reply.headers, reply.body.decode("utf-8"))


class HttpGateway:
    """The `xmemo serve` subprocess of tests/gateway.py, over a keep-alive HTTP connection."""

    name = "rest-http"

    def __init__(self, gw):
        self.gw = gw
        self.db_path = gw.settings.data_dir / "xmemo.sqlite3"
        self.client = httpx.Client(base_url=gw.url, timeout=30)

    def token(self, sub: str, scopes: list[str], teams: list[str]) -> str:
        return self.gw.token(sub, *scopes, teams=teams)

    def call(self, token: str, method: str, path: str, *, query: dict | None = None, body: Any = None) -> Answer:
        r = self.client.request(
            method, path, params=_query(query) or None, json=body, headers={"Authorization": f"Bearer {token}"}
        )
        return Answer(r.status_code, dict(r.headers), r.text)

    def close(self) -> None:
        self.client.close()


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
