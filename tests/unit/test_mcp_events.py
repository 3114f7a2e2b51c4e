"""events/mcp/*.json (the same files `sam local invoke McpFunction -e …` takes) through the
real functions/mcp/app.py, loaded as the local gateway loads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmemo.local.functions import FunctionPool
from xmemo.local.template import routes_of
from xmemo.services import default_services, default_settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    monkeypatch.setenv("XMEMO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XMEMO_EMBEDDER", "none")
    monkeypatch.setenv("XMEMO_OAUTH_ISSUER", "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example")
    default_services.cache_clear()
    default_settings.cache_clear()
    route = next(r for r in routes_of(ROOT / "template.yaml") if r.function == "McpFunction")
    pool = FunctionPool(route, size=1)

    def invoke(name: str):
        response = pool.invoke(json.loads((ROOT / "events/mcp" / f"{name}.json").read_text()))
        headers = {**(response.get("headers") or {}), **{k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}}
        return response["statusCode"], headers, json.loads(response["body"]) if response["body"] else None

    yield invoke
    default_services.cache_clear()
    default_settings.cache_clear()


def test_mcp_events_through_the_lambda_handler(invoke):
    status, headers, body = invoke("initialize")
    assert status == 200 and body["result"]["protocolVersion"] == "2025-11-25"
    assert [t["name"] for t in invoke("tools_list")[2]["result"]["tools"]] == ["recall_context", "recall", "search_memory", "remember"]
    assert invoke("tools_call_recall_context")[2]["result"]["content"][0]["text"] == "No matching XMemo memory was found."
    oob = invoke("tools_call_out_of_bounds")[2]["result"]
    assert oob["isError"] and oob["content"][0]["text"] == "Error 422 out_of_bounds: out of bounds: limit"
    assert invoke("server_discover_2026")[2]["result"]["supportedVersions"][0] == "2026-07-28"
    assert invoke("get_405")[0] == 405
    status, headers, _ = invoke("no_token")
    assert status == 401 and headers["WWW-Authenticate"] == (
        'Bearer resource_metadata="https://abc123.execute-api.us-east-1.amazonaws.com/prod/.well-known/oauth-protected-resource/mcp"')
    status, _, doc = invoke("resource_metadata")
    assert status == 200 and doc["authorization_servers"] == ["https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example"]
    assert doc["resource"] == "https://abc123.execute-api.us-east-1.amazonaws.com/prod/mcp"
