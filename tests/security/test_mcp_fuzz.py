"""The MCP endpoint under malformed JSON-RPC, over real HTTP through the gateway: wrong
types, huge ids, nested batches, invalid UTF-8, 10 MB bodies, deep nesting, and random
JSON from hypothesis. The answer is always well formed (a JSON-RPC response or error, a
list of them, an empty 202, or the gateway's SPEC §6 body before the handler) — never a
5xx, never a hang (every call has a 30 s client timeout)."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import cases

pytestmark = pytest.mark.e2e

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
HOSTILE: list[bytes] = [
    b'{"jsonrpc": 2, "id": 1, "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": 1, "method": 42}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "remember"}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 7, "arguments": []}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": 5}}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "x", "limit": "9"}}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}',
    b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": 1e999, "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": NaN, "method": "tools/list"}',
    b'{"jsonrpc": "2.0", "id": "' + b"i" * 200_000 + b'", "method": "tools/list"}',
    b"[[[[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/list\"}]]]]",
    b"[" + b",".join([b'{"jsonrpc": "2.0", "id": %d, "method": "tools/list"}' % i for i in range(500)]) + b"]",
    b"[]",
    b"[1, 2, 3]",
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
    b"[" * 200_000 + b"]" * 200_000,
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": "\xff\xfe\xfd"}}}',
    b"\xc3\x28\xa0\xa1",
    b"",
    b"null",
    b'"just a string"',
    b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": {"x": 1}}}',
]


def well_formed(status: int, text: str, where: str) -> None:
    assert status < 500, f"{where}: {status} {text[:300]}"
    if status == 202:
        return
    body = json.loads(text)
    messages = body if isinstance(body, list) else [body]
    for m in messages:
        if "jsonrpc" in m:
            assert m["jsonrpc"] == "2.0" and ("result" in m) != ("error" in m), f"{where}: {text[:300]}"
            if "error" in m:
                assert isinstance(m["error"]["code"], int) and isinstance(m["error"]["message"], str), f"{where}: {text[:300]}"
        else:  # the gateway's authorizer / HTTP-level refusals: SPEC §6
            assert set(m) == {"error"} and isinstance(m["error"]["message"], str), f"{where}: {text[:300]}"
    assert "Traceback" not in text


@pytest.fixture(scope="module")
def mcp_client(security_gateway):
    token = security_gateway.token("mcp-fuzzer", "memory:read", "memory:write", "memory:temporary")
    with httpx.Client(base_url=security_gateway.url, headers={"Authorization": f"Bearer {token}", **ACCEPT}, timeout=30) as c:
        yield c


@pytest.mark.parametrize("path", ["/mcp", "/mcp/full"])
def test_hostile_jsonrpc_always_gets_a_well_formed_answer(mcp_client, path):
    for body in HOSTILE:
        for version in (None, "2025-03-26"):
            headers = {"MCP-Protocol-Version": version} if version else {}
            r = mcp_client.post(path, content=body, headers=headers)
            well_formed(r.status_code, r.text, f"{path} {body[:60]!r} v={version}")
            cases.record("mcp-fuzz")


@pytest.mark.parametrize("path", ["/mcp", "/mcp/full"])
def test_ten_megabyte_body_is_a_jsonrpc_error_before_parsing(mcp_client, path):
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "' + b"x" * 10_000_000 + b'"}}'
    r = mcp_client.post(path, content=body)
    assert r.status_code == 400, r.text[:300]
    assert r.json()["error"]["code"] == -32600 and "exceeds" in r.json()["error"]["message"]


def test_mcp_handler_refuses_oversized_event_itself(tmp_path):
    """On AWS, API Gateway passes up to 10 MB: the MCP handler refuses before decoding."""
    from tests.mcp_lambda import invoke_mcp, mcp_pool
    from xmemo.config import Settings
    from xmemo.services import Services

    settings = Settings(data_dir=tmp_path, embedder="none")
    event = {"httpMethod": "POST", "resource": "/mcp", "path": "/mcp", "headers": ACCEPT, "body": "[" * (settings.max_body_bytes + 1),
             "requestContext": {"authorizer": {"claims": {"sub": "x", "token_use": "access", "scope": "xmemo/memory:read"}}}}
    out = invoke_mcp(mcp_pool(), Services(settings, store=None, embedder=None), event)  # no store: refused before any
    assert out["statusCode"] == 400 and json.loads(out["body"])["error"]["code"] == -32600


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=30,
)
messages = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_values,
        "id": st.integers() | st.text(max_size=20) | json_values,
        "method": st.sampled_from(["initialize", "tools/list", "tools/call", "ping", "resources/list"]) | json_values,
        "params": st.fixed_dictionaries({}, optional={"name": st.sampled_from(["remember", "recall", "search_memory", "recall_context", "get_memory", "list_memories", "forget"]) | json_values, "arguments": json_values}) | json_values,
    },
)


@pytest.mark.parametrize("path", ["/mcp", "/mcp/full"])
def test_random_jsonrpc_messages(mcp_client, path):
    @settings(max_examples=150, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(messages, st.lists(messages, max_size=4), json_values))
    def fuzz(message):
        r = mcp_client.post(path, content=json.dumps(message).encode(), headers={"MCP-Protocol-Version": "2025-03-26"})
        well_formed(r.status_code, r.text, f"{path} {json.dumps(message)[:200]}")
        cases.record("mcp-fuzz")

    fuzz()
