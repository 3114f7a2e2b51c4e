"""events/mcp/*.json (the same files `sam local invoke McpFunction -e …` takes) through the
real functions/mcp/app.py, loaded as the local gateway loads it."""

from __future__ import annotations

import gc
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


def test_a_cold_start_freezes_what_it_loaded_and_a_warm_call_freezes_nothing_more(invoke):
    """The local gateway, as Lambda's initialisation (`startup.settle`): after an instance's
    first invocation what it loaded is out of the collector's full passes; a warm
    invocation is left alone (it would pay a full collection every time)."""
    gc.unfreeze()
    try:
        assert gc.get_freeze_count() == 0
        invoke("initialize")
        assert gc.get_freeze_count() > 10_000, gc.get_freeze_count()
        made = []  # made between two warm calls: still in the collector's generations after the second
        invoke("initialize")
        assert any(o is made for o in gc.get_objects())
    finally:
        gc.unfreeze()
