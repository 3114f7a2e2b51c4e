"""events/mcp/*.json (the same files `sam local invoke McpFunction -e …` takes) through the
real functions/mcp/app.py, loaded as the local gateway loads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.event_checks import MCP_ANSWERS
from xmemo.local.functions import FunctionPool
from xmemo.local.template import routes_of
from xmemo.services import default_services, default_settings

ROOT = Path(__file__).resolve().parents[2]
ISSUER = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_example"


@pytest.fixture
def invoke(tmp_path, monkeypatch):
    monkeypatch.setenv("XMEMO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XMEMO_EMBEDDER", "none")
    monkeypatch.setenv("XMEMO_OAUTH_ISSUER", ISSUER)
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
    for name, check in MCP_ANSWERS.items():
        status, headers, body = invoke(name)
        check(status, headers, body, ISSUER)
    assert sorted(MCP_ANSWERS) == sorted(p.stem for p in (ROOT / "events/mcp").glob("*.json"))
