"""Every transport rule of the MCP endpoint, driven through the Lambda entry point with
API Gateway proxy events (the same shape API Gateway and the local gateway send)."""

from __future__ import annotations

import base64
import json
from dataclasses import replace

import pytest

from tests.mcp_lambda import invoke_mcp, mcp_pool
from xmemo.config import Settings
from xmemo.mcp.transport import MAX_BATCH

CLAIMS = {"sub": "alice", "token_use": "access", "scope": "xmemo/memory:read xmemo/memory:write"}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "pytest", "version": "1"},
}


@pytest.fixture
def lambda_mcp():
    """(event, settings, services) -> proxy response: the MCP function, in-process."""
    pool = mcp_pool()
    return lambda event, settings, services: invoke_mcp(pool, replace(services, settings=settings), event)


@pytest.fixture
def call(tmp_path, services, lambda_mcp):
    settings = Settings(data_dir=tmp_path, embedder="none", oauth_issuer="https://issuer.example/pool",
                        mcp_allowed_origins=("https://app.example",))

    def call(body, *, method="POST", path="/mcp", headers=None, claims=CLAIMS, raw=False, settings=settings):
        hdrs = {"Host": "api.example.com", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        hdrs.update(headers or {})
        event = {
            "httpMethod": method,
            "resource": path,
            "path": path,
            "headers": hdrs,
            "body": body if raw or body is None else json.dumps(body),
            "isBase64Encoded": False,
            "requestContext": {"stage": "Prod", "domainName": "api.example.com",
                               "authorizer": {"claims": claims} if claims is not None else None},
        }
        resp = lambda_mcp(event, settings, services)
        resp["json"] = json.loads(resp["body"]) if resp["body"] else None
        return resp

    return call


def req(method, params=None, id_=1):
    msg = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def modern(method, params=None, *, name=None):
    """A 2026-07-28 request and its mirrored headers."""
    params = dict(params or {})
    params["_meta"] = META
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return req(method, params), headers


# -- HTTP methods, notifications, parse errors ------------------------------------------
@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT"])
def test_only_post_is_allowed(call, verb):
    r = call(None, method=verb)
    assert r["statusCode"] == 405 and r["headers"]["Allow"] == "POST"


def test_notifications_and_responses_are_accepted_with_no_body(call):
    for msg in ({"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
                {"jsonrpc": "2.0", "id": 7, "result": {}}):
        r = call(msg, headers={"MCP-Protocol-Version": "2025-11-25"})
        assert (r["statusCode"], r["body"]) == (202, "")


@pytest.mark.parametrize("body", ["{not json", "", "\x00"])
def test_a_body_that_is_not_json_is_a_parse_error(call, body):
    r = call(body, raw=True)
    assert r["statusCode"] == 400
    assert r["json"] == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: the body is not JSON"}}


def test_a_base64_body_is_decoded(call, services, lambda_mcp):
    body = base64.b64encode(json.dumps(req("ping")).encode()).decode()
    event = {"httpMethod": "POST", "resource": "/mcp", "path": "/mcp", "headers": {"Host": "x"}, "body": body,
             "isBase64Encoded": True, "requestContext": {"authorizer": {"claims": CLAIMS}}}
    r = lambda_mcp(event, Settings(embedder="none"), services)
    assert json.loads(r["body"]) == {"jsonrpc": "2.0", "id": 1, "result": {}}


@pytest.mark.parametrize("msg", [1, {"jsonrpc": "1.0", "id": 1, "method": "ping"},
                                 {"jsonrpc": "2.0", "id": None, "method": "ping"},
                                 {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]}])
def test_malformed_messages_are_invalid_requests(call, msg):
    r = call(msg)
    assert r["statusCode"] == 400 and r["json"]["error"]["code"] == -32600


def test_unknown_method_is_method_not_found(call):
    legacy = call(req("resources/list"), headers={"MCP-Protocol-Version": "2025-11-25"})
    assert legacy["statusCode"] == 200 and legacy["json"]["error"]["code"] == -32601
    body, headers = modern("resources/list")
    r = call(body, headers=headers)  # 2026-07-28: 404 + -32601
    assert r["statusCode"] == 404 and r["json"]["error"]["code"] == -32601


def test_accept_and_content_type_are_checked(call):
    assert call(req("ping"), headers={"Accept": "text/html"})["statusCode"] == 406
    assert call(req("ping"), headers={"Content-Type": "text/plain"})["statusCode"] == 415


def test_no_session_is_minted_and_a_sent_one_is_ignored(call):
    r = call(req("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
             headers={"Mcp-Session-Id": "abc"})
    assert r["statusCode"] == 200
    assert not any(h.lower() == "mcp-session-id" for h in r["headers"])


# -- 2025 revisions -----------------------------------------------------------------------
@pytest.mark.parametrize("asked,answered", [("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"),
                                            ("2025-11-25", "2025-11-25"), ("2024-11-05", "2025-11-25"),
                                            ("2026-07-28", "2025-11-25"), ("banana", "2025-11-25")])
def test_initialize_negotiates_the_version(call, asked, answered):
    r = call(req("initialize", {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
    res = r["json"]["result"]
    assert res["protocolVersion"] == answered
    assert res["capabilities"] == {"tools": {"listChanged": False}}
    assert res["serverInfo"]["name"] == "xmemo" and "recall_context" in res["instructions"]


def test_protocol_version_header_is_checked_on_later_requests(call):
    r = call(req("tools/list"), headers={"MCP-Protocol-Version": "2024-01-01"})
    assert r["statusCode"] == 400
    err = r["json"]["error"]
    assert err["code"] == -32022 and err["data"]["requested"] == "2024-01-01"
    assert err["data"]["supported"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    for v in ("2025-03-26", "2025-06-18", "2025-11-25"):
        assert call(req("tools/list"), headers={"MCP-Protocol-Version": v})["statusCode"] == 200


def test_a_request_without_the_header_speaks_2025_03_26(call):
    # 2025-03-26 had no outputSchema / structuredContent; 2025-06-18 does.
    old = call(req("tools/list"), path="/mcp/full")["json"]["result"]["tools"]
    new = call(req("tools/list"), path="/mcp/full", headers={"MCP-Protocol-Version": "2025-06-18"})["json"]["result"]["tools"]
    assert all("outputSchema" not in t for t in old)
    assert all("outputSchema" in t for t in new)


def test_ping_answers_empty_on_legacy_and_is_gone_in_2026(call):
    assert call(req("ping"), headers={"MCP-Protocol-Version": "2025-11-25"})["json"] == {"jsonrpc": "2.0", "id": 1, "result": {}}
    body, headers = modern("ping")
    assert call(body, headers=headers)["json"]["error"]["code"] == -32601


# -- batches --------------------------------------------------------------------------------
def test_batches_are_served_under_2025_03_26(call):
    batch = [req("ping", id_=1), {"jsonrpc": "2.0", "method": "notifications/initialized"}, req("tools/list", id_="b")]
    r = call(batch, headers={"MCP-Protocol-Version": "2025-03-26"})
    assert r["statusCode"] == 200
    assert [m["id"] for m in r["json"]] == [1, "b"]
    assert r["json"][0]["result"] == {} and len(r["json"][1]["result"]["tools"]) == 4
    assert call(batch)["statusCode"] == 200  # no header = 2025-03-26


def test_a_batch_of_notifications_is_accepted(call):
    r = call([{"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 3, "result": {}}])
    assert (r["statusCode"], r["body"]) == (202, "")


def test_initialize_may_not_be_batched_and_bad_members_get_their_own_error(call):
    r = call([req("initialize", {"protocolVersion": "2025-03-26"}, id_=1), 42, req("ping", id_=2)])
    assert r["json"][0]["error"]["code"] == -32600 and r["json"][0]["id"] == 1
    assert r["json"][1] == {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "not a JSON-RPC 2.0 message"}}
    assert r["json"][2]["result"] == {}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_batches_are_refused_from_2025_06_18_on(call, version):
    r = call([req("ping")], headers={"MCP-Protocol-Version": version})
    assert r["statusCode"] == 400 and r["json"]["error"]["code"] == -32600


def test_an_empty_batch_is_invalid(call):
    assert call([])["json"]["error"]["code"] == -32600


def test_a_batch_is_capped(call, services):
    """One HTTP request runs at most MAX_BATCH messages; a longer batch runs none of them."""
    full = [req("tools/call", {"name": "remember", "arguments": {"content": f"batch note {n}"}}, id_=n) for n in range(MAX_BATCH)]
    r = call(full)
    assert r["statusCode"] == 200 and [m["id"] for m in r["json"]] == list(range(MAX_BATCH))
    assert all(m["result"]["isError"] is False for m in r["json"])
    stored = services.store.count()
    over = [req("tools/call", {"name": "remember", "arguments": {"content": f"over note {n}"}}, id_=n) for n in range(MAX_BATCH + 1)]
    r = call(over)
    assert r["statusCode"] == 400
    assert r["json"] == {"jsonrpc": "2.0", "id": None,
                         "error": {"code": -32600, "message": f"a batch carries at most {MAX_BATCH} messages"}}
    assert services.store.count() == stored == MAX_BATCH


# -- 2026-07-28 ------------------------------------------------------------------------------
def test_server_discover(call):
    body, headers = modern("server/discover")
    r = call(body, headers=headers)
    assert r["statusCode"] == 200
    res = r["json"]["result"]
    assert res["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
    assert res["capabilities"] == {"tools": {"listChanged": False}}
    assert res["resultType"] == "complete" and res["cacheScope"] == "public" and res["ttlMs"] > 0
    assert res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "xmemo"


def test_modern_results_are_complete_and_cacheable(call):
    body, headers = modern("tools/list")
    res = call(body, headers=headers)["json"]["result"]
    assert res["resultType"] == "complete" and res["cacheScope"] == "private" and res["ttlMs"] > 0
    assert [t["name"] for t in res["tools"]] == ["recall_context", "recall", "search_memory", "remember"]


@pytest.mark.parametrize("drop", ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"])
def test_meta_must_carry_version_and_capabilities(call, drop):
    body, headers = modern("tools/list")
    body["params"]["_meta"] = {k: v for k, v in META.items() if k != drop}
    r = call(body, headers=headers)
    assert r["statusCode"] == 400 and r["json"]["error"]["code"] == -32602


def test_discover_without_meta_is_invalid_params(call):
    r = call(req("server/discover"))
    assert r["statusCode"] == 400 and r["json"]["error"]["code"] == -32602


@pytest.mark.parametrize("header,value", [("MCP-Protocol-Version", "2025-11-25"), ("MCP-Protocol-Version", None),
                                          ("Mcp-Method", "tools/list"), ("Mcp-Method", None),
                                          ("Mcp-Name", "recall"), ("Mcp-Name", None)])
def test_headers_must_mirror_the_body(call, header, value):
    body, headers = modern("tools/call", {"name": "recall_context", "arguments": {"query": "x"}}, name="recall_context")
    if value is None:
        del headers[header]
    else:
        headers[header] = value
    r = call(body, headers=headers)
    assert r["statusCode"] == 400 and r["json"]["error"]["code"] == -32020


def test_mcp_name_may_be_base64_encoded(call):
    body, headers = modern("tools/call", {"name": "recall", "arguments": {"query": "nothing stored"}})
    headers["Mcp-Name"] = "=?base64?" + base64.b64encode(b"recall").decode() + "?="
    r = call(body, headers=headers)
    assert r["statusCode"] == 200 and r["json"]["result"]["content"][0]["text"] == "No matching XMemo memory was found."


def test_unsupported_modern_version_names_the_supported_ones(call):
    body, headers = modern("tools/list")
    body["params"]["_meta"] = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    headers["MCP-Protocol-Version"] = "2099-01-01"
    r = call(body, headers=headers)
    assert r["statusCode"] == 400
    assert r["json"]["error"]["code"] == -32022
    assert r["json"]["error"]["data"] == {"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"], "requested": "2099-01-01"}


def test_a_modern_tool_error_is_still_a_result(call):
    body, headers = modern("tools/call", {"name": "recall", "arguments": {"query": "x", "limit": 99}}, name="recall")
    r = call(body, headers=headers)
    assert r["statusCode"] == 200
    assert r["json"]["result"]["isError"] is True and r["json"]["result"]["resultType"] == "complete"


# -- origin, authorization, resource metadata ------------------------------------------
def test_origin_is_validated(call):
    assert call(req("ping"), headers={"Origin": "https://evil.example"})["statusCode"] == 403
    assert call(req("ping"), headers={"Origin": "https://app.example"})["statusCode"] == 200
    assert call(req("ping"))["statusCode"] == 200  # non-browser clients send no Origin


def test_missing_identity_is_401_with_the_resource_metadata(call):
    for path in ("/mcp", "/mcp/full"):
        r = call(req("tools/list"), path=path, claims=None)
        assert r["statusCode"] == 401
        assert r["headers"]["WWW-Authenticate"] == (
            f'Bearer resource_metadata="https://api.example.com/.well-known/oauth-protected-resource{path}"')
    bad = call(req("tools/list"), claims={"sub": "alice", "token_use": "id"})
    assert bad["statusCode"] == 401 and 'error="invalid_token"' in bad["headers"]["WWW-Authenticate"]


def test_stage_prefix_on_execute_api_domains(call, services, lambda_mcp):
    event = {"httpMethod": "POST", "resource": "/mcp", "path": "/mcp", "headers": {"Host": "abc.execute-api.eu-west-1.amazonaws.com"},
             "body": json.dumps(req("ping")), "requestContext": {"stage": "Prod", "authorizer": None}}
    r = lambda_mcp(event, Settings(embedder="none"), services)
    assert r["headers"]["WWW-Authenticate"] == (
        'Bearer resource_metadata="https://abc.execute-api.eu-west-1.amazonaws.com/Prod/.well-known/oauth-protected-resource/mcp"')


def test_a_token_with_no_memory_scope_is_403(call):
    r = call(req("tools/list"), claims={"sub": "alice", "scope": "xmemo/memory:temporary"})
    assert r["statusCode"] == 403
    assert 'error="insufficient_scope"' in r["headers"]["WWW-Authenticate"]
    assert 'scope="xmemo/memory:read xmemo/memory:write"' in r["headers"]["WWW-Authenticate"]


@pytest.mark.parametrize("suffix", ["", "/mcp", "/mcp/full"])
def test_protected_resource_metadata(call, suffix):
    r = call(None, method="GET", path="/.well-known/oauth-protected-resource" + suffix, claims=None)
    assert r["statusCode"] == 200
    assert r["json"] == {
        "resource": "https://api.example.com" + suffix,
        "authorization_servers": ["https://issuer.example/pool"],
        "scopes_supported": ["xmemo/memory:read", "xmemo/memory:write", "xmemo/memory:temporary"],
        "bearer_methods_supported": ["header"],
        "resource_name": "XMemo",
        "resource_documentation": "https://docs.xmemo.dev/docs/mcp",
    }


def test_metadata_names_the_local_gateway_on_loopback(call, tmp_path):
    r = call(None, method="GET", path="/.well-known/oauth-protected-resource/mcp", claims=None,
             headers={"Host": "127.0.0.1:8787"}, settings=Settings(data_dir=tmp_path, embedder="none"))
    assert r["json"]["authorization_servers"] == ["http://127.0.0.1:8787"]
    assert r["json"]["resource"] == "http://127.0.0.1:8787/mcp"
    elsewhere = call(None, method="GET", path="/.well-known/oauth-protected-resource", claims=None,
                     settings=Settings(data_dir=tmp_path, embedder="none"))
    assert elsewhere["statusCode"] == 404  # no issuer configured and not loopback: say so, do not guess


def test_unknown_routes_are_404(call):
    assert call(req("ping"), path="/mcp/other")["statusCode"] == 404
    assert call(None, method="GET", path="/.well-known/oauth-protected-resource/nope", claims=None)["statusCode"] == 404
