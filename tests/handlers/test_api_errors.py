"""xmemo.api: every domain error maps to its SPEC §6 status and body, 503 carries
Retry-After, and an unexpected failure is a generic 500 that leaks nothing."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from xmemo import api, errors
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore

EVENTS = Path(__file__).resolve().parents[2] / "events"


@pytest.mark.parametrize(
    "exc, status",
    [
        (errors.InvalidRequest("bad"), 400),
        (errors.Unauthorized("no"), 401),
        (errors.InsufficientScope("xmemo/memory:write"), 403),
        (errors.TeamMismatch("acme"), 403),
        (errors.NotFound(), 404),
        (errors.OutOfBounds("limit"), 422),
        (errors.CapturePolicyRefused("secret"), 422),
        (errors.StoreUnavailable(retry_after=7), 503),
    ],
)
def test_error_response_status_and_body(exc, status):
    response = api.error_response(exc)
    assert response.status_code == status
    body = json.loads(response.body)
    assert body["error"]["code"] == exc.code and body["error"]["message"] == exc.message
    assert ("details" in body["error"]) == (exc.details is not None)
    assert (response.headers.get("Retry-After") == "7") == (status == 503)


def test_unknown_error_code_is_a_500():
    class Odd(errors.XMemoError):
        code = "odd"

    response = api.error_response(Odd("x"))
    assert response.status_code == 500 and json.loads(response.body)["error"]["code"] == "internal"


def _event(name: str) -> dict:
    return json.loads((EVENTS / name).read_text())


def test_busy_store_is_503_with_retry_after(tmp_path, settings, clock, invoke_with):
    path = tmp_path / "busy.sqlite3"
    store = SQLiteStore(path, busy_timeout_ms=0)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        status, body, headers = invoke_with(Services(settings, store, None, clock), _event("remember/valid.json"))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
        store.close()
    assert (status, body["error"]["code"]) == (503, "store_unavailable")
    assert int(headers["Retry-After"]) >= 1


def test_unexpected_failure_is_generic_500_logged_without_content(tmp_path, settings, clock, invoke_with, capsys, caplog):
    store = SQLiteStore(tmp_path / "closed.sqlite3")
    store.close()  # any use now raises sqlite3.ProgrammingError: not a domain error
    event = _event("remember/valid.json")
    status, body, _ = invoke_with(Services(settings, store, None, clock), event)
    assert status == 500
    assert body == {"error": {"code": "internal", "message": api.INTERNAL_MESSAGE}}
    records = [r for r in caplog.records if r.getMessage() == "unhandled error"]
    assert records and records[0].error_type == "ProgrammingError"  # the type is logged ...
    logged = capsys.readouterr()
    text = logged.out + logged.err + "".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
    assert "OpenSearch over DynamoDB" not in text  # ... never the content
    assert "closed database" not in text  # ... nor the exception's message
    assert "Bearer" not in text


def test_malformed_base64_and_missing_body_are_400(invoke_with, services):
    event = _event("recall/valid.json")
    event["body"] = None
    status, body, _ = invoke_with(services, event)
    assert (status, body["error"]["code"]) == (400, "invalid_request")
    event["body"], event["isBase64Encoded"] = "%%%not-base64", True
    status, body, _ = invoke_with(services, event)
    assert (status, body["error"]["code"]) == (400, "invalid_request")


def test_unknown_route_inside_a_function_is_spec_shaped_404(invoke_with, services):
    event = _event("recall/valid.json")
    event["path"] = "/v1/nowhere"
    status, body, _ = invoke_with(services, event)
    assert (status, body["error"]["code"]) == (404, "not_found")


def test_a_refused_request_opens_no_store(tmp_path, monkeypatch):
    """Settings are read without building the services: a request refused for its scope
    (or its size) answers from the settings alone, and the store is never opened."""
    from tests.handlers.conftest import route_for
    from xmemo.local.functions import FunctionPool
    from xmemo.services import default_services, default_settings

    monkeypatch.setenv("XMEMO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XMEMO_EMBEDDER", "none")
    default_settings.cache_clear()
    default_services.cache_clear()
    try:
        event = json.loads((EVENTS / "remember" / "missing_scope.json").read_text())
        response = FunctionPool(route_for(event), size=1).invoke(event)
        assert response["statusCode"] == 403
        assert default_services.cache_info().currsize == 0 and not (tmp_path / "xmemo.sqlite3").exists()
        assert api.settings().data_dir == tmp_path
    finally:
        default_settings.cache_clear()
        default_services.cache_clear()
