"""End to end: the local gateway (`xmemo serve`, real RS256 tokens from `xmemo token`)
driven over HTTP by the official MCP SDK clients (1.x in this venv, 2.x from .venv-mcp2
as a subprocess), by raw HTTP for the transport rules, and through the stdio bridge."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway, xmemo_command

pytestmark = pytest.mark.e2e

MCP2_PYTHON = ROOT / ".venv-mcp2" / "bin" / "python"
REF = r"mem_[0-9A-Z]{26}"
XMEMO = xmemo_command()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    with start_gateway(tmp_path_factory.mktemp("gateway"), cwd=ROOT) as gw:

        class Gateway:
            base = gw.url

            @staticmethod
            def token(sub: str, *scopes: str, teams: tuple[str, ...] = ()) -> str:
                """Minted by `xmemo token`, as a user would."""
                args = ["token", "--sub", sub, *[a for s in scopes for a in ("--scope", s)], *[a for t in teams for a in ("--team", t)]]
                done = gw.cli(*args)
                assert done.returncode == 0, done.stderr
                return done.stdout.strip()

        yield Gateway


RW = ("memory:read", "memory:write")


# -- the 1.x SDK client (2025-11-25) --------------------------------------------------------
async def _sdk1(url: str, token: str | None, steps):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                return init, await steps(session)


def text(result) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def test_sdk1_public_profile(gateway):
    async def steps(s):
        names = [t.name for t in (await s.list_tools()).tools]
        stored = await s.call_tool("remember", {"content": "We chose Cognito for MCP authentication.", "type": "decision",
                                                "location": "memory-os/decisions", "project": "memory-os"})
        ref = text(stored).split()[2]
        return names, ref, {
            "stored": text(stored),
            "recall": text(await s.call_tool("recall", {"query": "Cognito authentication decision", "limit": 3})),
            "search": text(await s.call_tool("search_memory", {"query": "Cognito", "project": "memory-os"})),
            "context": text(await s.call_tool("recall_context", {"query": "Cognito authentication", "max_items": 6, "max_tokens": 1200})),
            "nothing": text(await s.call_tool("recall", {"query": "a topic that was never saved zebra"})),
            "bounds": await s.call_tool("recall", {"query": "x", "limit": 21}),
            "ping": await s.send_ping(),
        }

    init, (names, ref, out) = asyncio.run(_sdk1(gateway.base + "/mcp", gateway.token("sdk1", *RW), steps))
    assert init.protocolVersion == "2025-11-25" and init.serverInfo.name == "xmemo"
    assert names == ["recall_context", "recall", "search_memory", "remember"]
    assert re.fullmatch(rf"Stored: Reference: {REF} \| Type: decision \| Location: memory-os/decisions", out["stored"])
    assert out["recall"] == (f"### XMemo Recall\nResults: 1\n1. Reference: {ref} | Type: decision | Location: memory-os/decisions"
                             " | Boundary: owner:sdk1/project:memory-os\n   We chose Cognito for MCP authentication.")
    assert out["search"] == out["recall"].replace("### XMemo Recall", "### XMemo Search")
    assert out["context"] == (f"### XMemo Context\nItems: 1\nReference: {ref} | Type: decision | Location: memory-os/decisions\n"
                              "Context:\n[1] We chose Cognito for MCP authentication.")
    assert out["nothing"] == "No matching XMemo memory was found."
    assert out["bounds"].isError and text(out["bounds"]) == "Error 422 out_of_bounds: out of bounds: limit"


def test_sdk1_full_surface_and_scopes(gateway):
    async def steps(s):
        tools = (await s.list_tools()).tools
        stored = await s.call_tool("remember", {"content": "Use blue-green deploys.", "title": "Deploys", "type": "procedure"})
        ref = stored.structuredContent["memory"]["reference"]
        calls = {name: await s.call_tool(name, args) for name, args in [
            ("recall", {"query": "deploys", "type": "procedure"}), ("search_memory", {"query": "blue-green"}),
            ("recall_context", {"query": "deploys"}), ("get_memory", {"reference": ref}),
            ("list_memories", {"limit": 5}), ("forget", {"reference": ref})]}
        calls["remember"] = stored
        calls["gone"] = await s.call_tool("get_memory", {"reference": ref})
        return tools, ref, calls

    _, (tools, ref, calls) = asyncio.run(_sdk1(gateway.base + "/mcp/full", gateway.token("full1", *RW), steps))
    assert [t.name for t in tools] == ["recall_context", "recall", "search_memory", "remember", "get_memory", "list_memories", "forget"]
    assert all(t.outputSchema for t in tools)  # the client validated every structuredContent against these
    assert {t.name: t.annotations.destructiveHint for t in tools}["forget"] is True
    for name in ("remember", "recall", "search_memory", "recall_context", "get_memory", "list_memories", "forget"):
        assert calls[name].isError is False and calls[name].structuredContent is not None, name
    assert calls["recall"].structuredContent["results"][0]["reference"] == ref
    assert text(calls["forget"]) == "Deleted: 1"
    assert calls["gone"].isError and text(calls["gone"]).startswith("Error 404 not_found: ")

    async def read_only(s):
        return [t.name for t in (await s.list_tools()).tools], await s.call_tool("remember", {"content": "x"}), \
            await s.call_tool("recall", {"query": "x", "include_temporary": True})

    _, (names, refused, temporary) = asyncio.run(_sdk1(gateway.base + "/mcp/full", gateway.token("reader", "memory:read"), read_only))
    assert names == ["recall_context", "recall", "search_memory", "get_memory", "list_memories"]
    assert refused.isError and text(refused) == "Error 403 insufficient_scope: the token lacks the scope xmemo/memory:write"
    assert temporary.isError and text(temporary) == "Error 403 insufficient_scope: the token lacks the scope xmemo/memory:temporary"


# -- the 2.x SDK client (2026-07-28), from its own venv -----------------------------------
def _sdk2(url: str, token: str, calls: list) -> dict:
    assert MCP2_PYTHON.exists(), "the 2.x MCP client venv is missing: run `make test` (it creates .venv-mcp2)"
    proc = subprocess.run([str(MCP2_PYTHON), str(ROOT / "tests/e2e/mcp_sdk2_client.py"), url, json.dumps(calls)],
                          env={**os.environ, "XMEMO_TOKEN": token}, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_sdk2_speaks_2026_07_28_on_both_surfaces(gateway):
    plan = [["remember", {"content": "The billing service retries webhooks three times.", "type": "fact", "location": "billing/webhooks"}],
            ["recall", {"query": "webhook retries"}], ["search_memory", {"query": "webhooks"}],
            ["recall_context", {"query": "billing webhooks", "max_tokens": 200}],
            ["recall", {"query": "x", "limit": 0}], ["recall_context", {"query": "x", "max_items": 51}]]
    out = _sdk2(gateway.base + "/mcp", gateway.token("sdk2", *RW), plan)
    assert out["protocol_version"] == "2026-07-28" and out["server_name"] == "xmemo"
    assert [t["name"] for t in out["tools"]] == ["recall_context", "recall", "search_memory", "remember"]
    remember, recall, search, context, bad_limit, bad_items = out["calls"]
    ref = re.fullmatch(rf"Stored: Reference: ({REF}) \| Type: fact \| Location: billing/webhooks", remember["text"]).group(1)
    assert recall["text"] == (f"### XMemo Recall\nResults: 1\n1. Reference: {ref} | Type: fact | Location: billing/webhooks"
                              " | Boundary: owner:sdk2\n   The billing service retries webhooks three times.")
    assert search["text"].startswith("### XMemo Search\nResults: 1\n")
    assert context["text"].startswith(f"### XMemo Context\nItems: 1\nReference: {ref} | Type: fact | Location: billing/webhooks\nContext:\n[1] ")
    assert bad_limit["is_error"] and bad_limit["text"] == "Error 422 out_of_bounds: out of bounds: limit"
    assert bad_items["is_error"] and bad_items["text"] == "Error 422 out_of_bounds: out of bounds: max_items"
    assert all(c["structured"] is None for c in out["calls"])  # public profile: text only

    full = _sdk2(gateway.base + "/mcp/full", gateway.token("sdk2", *RW),
                 [["remember", {"content": "Rotate the signing key monthly.", "type": "procedure"}], ["get_memory", {"reference": "$REF"}],
                  ["list_memories", {"limit": 10}], ["forget", {"reference": "$REF"}], ["get_memory", {"reference": "$REF"}]])
    assert all(t["has_output_schema"] for t in full["tools"]) and len(full["tools"]) == 7
    stored, got, listed, forgot, gone = full["calls"]
    assert stored["structured"]["memory"]["content"] == "Rotate the signing key monthly."
    # stored text is indented under its record line, as data (SPEC §5)
    assert got["text"].endswith("\n   Rotate the signing key monthly.") and got["structured"]["memory"]["type"] == "procedure"
    assert listed["structured"]["memories"][0]["reference"] == stored["structured"]["memory"]["reference"]
    assert forgot["text"] == "Deleted: 1" and forgot["structured"] == {"deleted": 1}
    assert gone["is_error"] and gone["text"].startswith("Error 404 not_found")

    reader = _sdk2(gateway.base + "/mcp", gateway.token("sdk2", "memory:read"), [["remember", {"content": "x"}]])
    assert [t["name"] for t in reader["tools"]] == ["recall_context", "recall", "search_memory"]
    assert reader["calls"][0]["text"] == "Error 403 insufficient_scope: the token lacks the scope xmemo/memory:write"


# -- authorization the way MCP clients discover it ------------------------------------------
@pytest.mark.parametrize("path", ["/mcp", "/mcp/full"])
@pytest.mark.parametrize("authorization", [None, "Bearer not-a-jwt", "Basic Zm9vOmJhcg=="])
def test_401_names_the_resource_metadata(gateway, path, authorization):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    r = httpx.post(gateway.base + path, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert r.status_code == 401
    challenge = r.headers["WWW-Authenticate"]
    assert challenge.startswith("Bearer ")
    metadata_url = re.search(r'resource_metadata="([^"]+)"', challenge).group(1)
    assert metadata_url == f"{gateway.base}/.well-known/oauth-protected-resource{path}"
    doc = httpx.get(metadata_url).json()
    issuer = httpx.get(gateway.base + "/.well-known/openid-configuration").json()["issuer"]
    assert doc["resource"] == gateway.base + path
    assert doc["authorization_servers"] == [issuer]
    assert doc["scopes_supported"] == ["xmemo/memory:read", "xmemo/memory:write", "xmemo/memory:temporary"]


def test_sdk1_without_a_token_fails_with_401(gateway):
    async def steps(s):
        return None

    with pytest.raises(BaseException) as info:
        asyncio.run(_sdk1(gateway.base + "/mcp", None, steps))
    assert "401" in repr(info.value) or "Unauthorized" in repr(info.value)


# -- raw HTTP: the transport rules over the real gateway ------------------------------------
@pytest.fixture(scope="module")
def raw(gateway):
    token = gateway.token("raw", *RW)

    def post(body, *, path="/mcp", headers=None, content=None):
        h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        h.update(headers or {})
        return httpx.post(gateway.base + path, headers=h, content=content if content is not None else json.dumps(body))

    post.token = token
    return post


def test_raw_http_transport_rules(gateway, raw):
    auth = {"Authorization": f"Bearer {raw.token}"}
    for verb in ("GET", "DELETE"):
        r = httpx.request(verb, gateway.base + "/mcp", headers={**auth, "Accept": "text/event-stream"})
        assert r.status_code == 405
    r = raw({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers={"MCP-Protocol-Version": "2025-11-25"})
    assert (r.status_code, r.content) == (202, b"")
    r = raw(None, content="{oops")
    assert r.status_code == 400 and r.json()["error"]["code"] == -32700
    r = raw({"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}, headers={"MCP-Protocol-Version": "2025-11-25"})
    assert r.json()["error"]["code"] == -32601
    r = raw({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope"}}, headers={"MCP-Protocol-Version": "2025-11-25"})
    assert r.json()["error"]["code"] == -32602
    r = raw({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"MCP-Protocol-Version": "1999-01-01"})
    assert r.status_code == 400
    r = raw([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    assert r.status_code == 200 and [m["id"] for m in r.json()] == [1, 2]  # no header: 2025-03-26, batches allowed
    r = raw([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], headers={"MCP-Protocol-Version": "2025-11-25"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32600
    assert "mcp-session-id" not in raw({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}).headers


def test_raw_http_2026_07_28(raw):
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    r = raw({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}, headers=headers)
    assert r.status_code == 200 and r.json()["result"]["supportedVersions"][0] == "2026-07-28"
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "x"}, "_meta": meta}}
    r = raw(body, headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "search_memory"})
    assert r.status_code == 400 and r.json()["error"]["code"] == -32020
    r = raw(body, headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "recall"})
    assert r.status_code == 200 and r.json()["result"]["resultType"] == "complete"
    r = raw({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": meta}}, headers={"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"})
    assert r.status_code == 404 and r.json()["error"]["code"] == -32601


def test_dns_rebinding_protection(gateway, raw):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert raw(ping, headers={"Origin": "http://evil.example"}).status_code == 403
    port = gateway.base.rsplit(":", 1)[1]
    assert raw(ping, headers={"Host": f"evil.example:{port}"}).status_code == 403
    assert raw(ping, headers={"Origin": gateway.base}).status_code == 200
    assert raw(ping, headers={"Origin": f"http://localhost:{port}", "Host": f"localhost:{port}"}).status_code == 200


def test_binds_loopback_only(gateway):
    port = int(gateway.base.rsplit(":", 1)[1])
    tables = [Path("/proc/net/tcp"), Path("/proc/net/tcp6")]
    if not tables[0].exists():
        pytest.skip("no /proc/net/tcp on this system")
    listening = []
    for table in tables:
        for line in table.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                listening.append(address)
    assert listening == ["0100007F"]  # 127.0.0.1 only: not 0.0.0.0, not ::


# -- the stdio bridge, spawned as a subprocess by the official clients ------------------------
def test_stdio_bridge_with_the_sdk1_client(gateway):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        params = StdioServerParameters(command=sys.executable, args=[*XMEMO[1:], "mcp-stdio", "--url", gateway.base + "/mcp"],
                                       env={**os.environ, "XMEMO_TOKEN": gateway.token("stdio", *RW)})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                init = await s.initialize()
                stored = await s.call_tool("remember", {"content": "The stdio bridge forwards JSON-RPC lines."})
                recalled = await s.call_tool("recall", {"query": "stdio bridge"})
                return init, [t.name for t in (await s.list_tools()).tools], text(stored), text(recalled)

    init, names, stored, recalled = asyncio.run(main())
    assert init.protocolVersion == "2025-11-25"
    assert names == ["recall_context", "recall", "search_memory", "remember"]
    ref = re.fullmatch(rf"Stored: Reference: ({REF}) \| Type: note \| Location: default", stored).group(1)
    assert recalled == (f"### XMemo Recall\nResults: 1\n1. Reference: {ref} | Type: note | Location: default | Boundary: owner:stdio\n"
                        "   The stdio bridge forwards JSON-RPC lines.")


def test_stdio_bridge_answers_when_the_endpoint_refuses(gateway):
    line = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    proc = subprocess.run([*XMEMO, "mcp-stdio", "--url", gateway.base + "/mcp", "--token", "garbage"], input=line + "\n",
                          capture_output=True, text=True, timeout=60)
    reply = json.loads(proc.stdout)
    assert reply["id"] == 9 and reply["error"]["code"] == -32603 and "401" in reply["error"]["message"]
    assert "garbage" not in proc.stderr and "garbage" not in proc.stdout
