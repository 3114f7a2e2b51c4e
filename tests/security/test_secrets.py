"""Secrets pasted into memories (75 realistic secrets of 25 kinds, in sentences in six
languages, in content, title and location) through every write path — REST over HTTP
and `xmemo import` — are never stored (the SQLite file's bytes, WAL included), indexed
(FTS terms), logged (the gateway's log at DEBUG, the CLI's output) or returned (every
answer of every read that could surface them)."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest

from xmemo import text
from xmemo.config import Settings
from xmemo.models import Memory
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore
from xmemo.tools import content_hash

from . import cases
from .secrets_corpus import Secret, corpus
from .surfaces import InProcessGateway, stored

pytestmark = pytest.mark.e2e

SECRETS = corpus()
POLICY_KIND = {  # corpus kind → the policy's name for it
    "github_pat": "github_token", "password_more_languages": "password", "login_pair": "password",
    "client_credentials": "password", "key_material": "password",
}


def test_corpus_is_big_and_varied():
    assert len(SECRETS) >= 50 and len({s.kind for s in SECRETS}) >= 15
    assert len({s.value for s in SECRETS}) == len(SECRETS)
    assert all(s.value in s.text for s in SECRETS)


def secret_terms(value: str) -> set[str]:
    """The index terms a secret would leave behind: its long or digit-bearing words."""
    return {w for w in text.words(value) if len(w) >= 10 or (len(w) >= 6 and any(c.isdigit() for c in w))}


def fts_hits(db: Path, terms: set[str]) -> set[str]:
    conn = sqlite3.connect(db, timeout=30)
    try:
        found = set()
        for term in terms:
            for column, token in (("words", term), ("stems", " ".join(text.stems(term)) or term)):
                q = f'{column} : "{token.replace(chr(34), "")}"'
                if conn.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (q,)).fetchone()[0]:
                    found.add(term)
        return found
    finally:
        conn.close()


def file_bytes(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))


def assert_nowhere(secret: Secret, where: str, blob: str | bytes) -> None:
    if isinstance(blob, str):
        assert secret.value not in blob, f"{secret.kind} secret found in {where}"
    else:
        for form in {secret.value.encode(), secret.value.lower().encode()}:
            assert form not in blob, f"{secret.kind} secret found in {where}"


def import_line(s: Secret, i: int) -> str:
    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    m = Memory(
        reference=f"mem_IMPORT{i:020d}", type="note", content=s.text, title=s.text[:200] if i % 2 else None,
        location="ops/" + s.text[:200] if i % 3 == 0 and "\n" not in s.text else "ops", bucket="imported", owner="secrets-importer",
        boundary="owner:secrets-importer", created_at=now, updated_at=now, content_sha256=content_hash(s.text),
    )
    return json.dumps(m.public_dict(), ensure_ascii=False)


def test_secrets_never_stored_indexed_logged_or_returned(security_gateway, tmp_path):
    gw = security_gateway
    writer = gw.token("secrets-owner", "memory:read", "memory:write")
    answers: list[str] = []
    with httpx.Client(base_url=gw.url, headers={"Authorization": f"Bearer {writer}"}, timeout=30) as http:
        # -- REST: content, and also title / location on some --------------------------------
        for i, s in enumerate(SECRETS):
            body = {"content": s.text, "bucket": "secrets", "tags": ["creds"]}
            if i % 2 and len(s.text) <= 200:
                body["title"] = s.text
            if i % 3 == 0 and "\n" not in s.text:
                body["location"] = "ops/" + s.text[:240]
            r = http.post("/v1/memories", json=body)
            assert r.status_code == 201, r.text
            assert POLICY_KIND.get(s.kind, s.kind) in r.json()["redacted"], (s.kind, r.json()["redacted"])
            answers.append(r.text)
            cases.record("secrets[rest]")
        # -- import -------------------------------------------------------------------------
        jsonl = tmp_path / "with-secrets.jsonl"
        jsonl.write_text("\n".join(import_line(s, i) for i, s in enumerate(SECRETS)) + "\n", encoding="utf-8")
        done = gw.cli("import", str(jsonl), "--quiet")
        assert done.returncode == 0, done.stderr[-2000:]
        cli_output = done.stdout + done.stderr
        cases.record("secrets[import]", len(SECRETS))
        importer = gw.token("secrets-importer", "memory:read")
        # -- MCP, public profile: tools/call remember ----------------------------------------
        mcp_writer = gw.token("secrets-mcp", "memory:read", "memory:write")
        mcp_headers = {
            "Authorization": f"Bearer {mcp_writer}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        for i, s in enumerate(SECRETS):
            rpc = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                   "params": {"name": "remember", "arguments": {"content": s.text, "bucket": "secrets"}}}
            r = http.post("/mcp", json=rpc, headers=mcp_headers)
            assert r.status_code == 200, r.text
            result = r.json()["result"]
            assert not result["isError"], result
            text = result["content"][0]["text"]
            assert text.startswith("Stored: Reference: ") and "\nRedacted: " in text, (s.kind, text)
            answers.append(r.text)
            cases.record("secrets[mcp]")
        # -- every read that could surface them -------------------------------------------
        for token in (writer, importer, mcp_writer):
            h = {"Authorization": f"Bearer {token}"}
            page = http.get("/v1/memories", params={"limit": 100}, headers=h)
            assert page.status_code == 200 and len(page.json()["memories"]) == len(SECRETS), page.text[:300]
            answers.append(page.text)
            for m in page.json()["memories"]:
                answers.append(http.get(f"/v1/memories/{m['reference']}", headers=h).text)
            for s in SECRETS:
                for term in sorted(secret_terms(s.value))[:2]:
                    for route in ("/v1/search", "/v1/recall"):
                        r = http.post(route, json={"query": term, "limit": 20}, headers=h)
                        assert r.status_code == 200, r.text
                        assert r.json()["results"] == [] or route == "/v1/recall", (s.kind, route)
                        answers.append(r.text)

    db = gw.settings.data_dir / "xmemo.sqlite3"
    assert sum(1 for ref in stored(db) if ref.startswith("mem_IMPORT")) == len(SECRETS)
    raw = file_bytes(db)
    log = (gw.settings.data_dir / "gateway.log").read_text(errors="replace")
    assert "POST /v1/memories 201" in log  # the access log and Powertools (DEBUG) write here
    all_answers = "\n".join(answers)
    for s in SECRETS:
        assert_nowhere(s, "the SQLite file (db + WAL)", raw)
        assert not fts_hits(db, secret_terms(s.value)), f"{s.kind} secret terms in the FTS index"
        assert_nowhere(s, "the gateway log", log)
        assert_nowhere(s, "xmemo import output", cli_output)
        assert_nowhere(s, "an answer", all_answers)


def test_reject_mode_refuses_every_secret_and_stores_nothing(tmp_path, monkeypatch):
    """`XMEMO_CAPTURE_POLICY=reject`: 422 capture_policy naming kinds, never the value."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    svc = Services(Settings(data_dir=tmp_path, embedder="none", capture_policy="reject"), SQLiteStore(tmp_path / "x.sqlite3"), None)
    surface = InProcessGateway(svc, tmp_path)
    token = surface.token("rejecter", ["memory:write"], [])
    for s in SECRETS:
        a = surface.call(token, "POST", "/v1/memories", body={"content": s.text})
        assert a.status == 422 and a.json()["error"]["code"] == "capture_policy", a.text
        assert POLICY_KIND.get(s.kind, s.kind) in a.json()["error"]["details"]["kinds"]
        assert_nowhere(s, "a 422 answer", a.raw)
        cases.record("secrets[reject]")
    assert stored(svc.store.path) == {}
    svc.store.close()
