"""The service on Titan v2 over real HTTP, through boto3 as deployed (a local server of
InvokeModel's shape, tests/titan_local.py; no AWS account here): a short throttle is ridden
out, a throttle that lasts or a model that stalls is a 503 with Retry-After within the
embedding's deadline (so inside the Lambda timeout) and nothing is half-written, and a model
the account may not use is a 500 whose log names the error. Time bounds are the deadline
plus 2 s of slack, as in tests/opensearch/test_failures.py."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from tests.titan_local import TitanLocal
from xmemo.config import Settings
from xmemo.embedding import make_embedder
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore

EVENTS = Path(__file__).resolve().parents[2] / "events"
CONTENT = "We chose OpenSearch over DynamoDB for hybrid retrieval."
SLACK = 2.0


@pytest.fixture
def titan(monkeypatch):
    with TitanLocal() as server:
        for name, value in server.environment(dimensions=256).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("XMEMO_BEDROCK_DEADLINE_S", "8")  # room for retries on a busy machine; the stall test sets its own
        yield server


@pytest.fixture
def services(titan, tmp_path: Path, clock):
    settings = Settings(data_dir=tmp_path)  # XMEMO_EMBEDDER=bedrock, 256 dimensions, from the environment
    store = SQLiteStore(tmp_path / "xmemo.sqlite3")
    yield Services(settings, store, make_embedder(settings.embedder, bedrock=settings), clock)
    store.close()


def _event(name: str, **body) -> dict:
    event = json.loads((EVENTS / name).read_text())
    event["body"] = json.dumps({**json.loads(event["body"]), **body})
    return event


def test_remember_and_recall_embed_through_titan(services, titan, invoke_with):
    status, body, _ = invoke_with(services, _event("remember/valid.json"))
    assert status == 201, body
    reference = body["memory"]["reference"]
    status, body, _ = invoke_with(services, _event("recall/valid.json", query="OpenSearch hybrid retrieval"))
    assert status == 200 and [r["reference"] for r in body["results"]] == [reference]
    assert {CONTENT, "OpenSearch hybrid retrieval"} <= {r["inputText"] for r in titan.requests}
    assert all(r["dimensions"] == 256 for r in titan.requests)


@pytest.mark.parametrize("status, error_type", [(429, "ThrottlingException"), (500, "InternalServerException"), (503, "ServiceUnavailableException")])
def test_a_short_throttle_or_server_fault_is_ridden_out(services, titan, invoke_with, status, error_type):
    titan.refuse(status, error_type, times=2)
    status, body, _ = invoke_with(services, _event("remember/valid.json"))
    assert status == 201, body
    assert titan.attempts == 3 and services.store.count() == 1  # two refused, the third answered


def _unavailable_in_time(services, invoke_with) -> None:
    start = time.monotonic()
    status, body, headers = invoke_with(services, _event("remember/valid.json"))
    assert time.monotonic() - start < services.settings.bedrock_deadline_s + SLACK
    assert status == 503 and body["error"]["code"] == "store_unavailable" and int(headers["Retry-After"]) >= 1
    assert services.store.count() == 0


def test_a_lasting_throttle_is_503_with_retry_after_and_nothing_written(services, titan, invoke_with):
    titan.refuse(429, "ThrottlingException")
    _unavailable_in_time(services, invoke_with)
    assert titan.attempts >= 2  # retried, while an attempt still fitted the deadline
    titan.recover()
    status, _, _ = invoke_with(services, _event("remember/valid.json"))  # the agent's retry lands once
    assert status == 201 and services.store.count() == 1


def test_a_stalled_model_is_503_within_the_deadline(titan, monkeypatch, tmp_path: Path, clock, invoke_with):
    """Before the deadline, botocore's own retries waited the read timeout on each of four
    attempts: 24.5 s against this server at 5 s each, past the 12 s Lambda timeout."""
    monkeypatch.setenv("XMEMO_BEDROCK_TIMEOUT_S", "0.5")
    monkeypatch.setenv("XMEMO_BEDROCK_DEADLINE_S", "1.5")
    settings = Settings(data_dir=tmp_path)
    store = SQLiteStore(tmp_path / "xmemo.sqlite3")
    svc = Services(settings, store, make_embedder(settings.embedder, bedrock=settings), clock)
    titan.delay = 30.0
    try:
        _unavailable_in_time(svc, invoke_with)
    finally:
        store.close()


def test_a_memory_over_titans_token_limit_is_stored_whole_and_embedded_by_its_first_part(services, titan, invoke_with):
    """8,000 characters (SPEC's bound) of a dense script pass Titan's 8,192 tokens; Titan
    refuses the text, names the counts, and has no option to truncate."""
    content = "部署说明：先运行迁移脚本🚀" * 615  # 13 characters, 15 tokens each: about 9,200 tokens
    status, body, _ = invoke_with(services, _event("remember/valid.json", content=content[:8000]))
    assert status == 201, body
    refused = [m for m in titan.refused if "Too many input tokens" in m]
    embedded = [r["inputText"] for r in titan.requests if r["inputText"] != "OpenSearch hybrid retrieval"]
    assert len(refused) == 1 and len(embedded) == 1 and content[:8000].startswith(embedded[0]) and len(embedded[0]) < 8000
    event = json.loads((EVENTS / "memories_get/valid.json").read_text())
    event["pathParameters"] = {"reference": body["memory"]["reference"]}
    event["path"] = f"/v1/memories/{body['memory']['reference']}"
    status, got, _ = invoke_with(services, event)
    assert status == 200 and got["memory"]["content"] == content[:8000]  # nothing cut from what is stored


def test_a_model_the_account_may_not_use_is_a_500_whose_log_names_the_error(services, titan, invoke_with, caplog):
    titan.refuse(403, "AccessDeniedException")
    with caplog.at_level(logging.ERROR):
        status, body, _ = invoke_with(services, _event("remember/valid.json"))
    assert status == 500 and body["error"]["code"] == "internal" and CONTENT not in json.dumps(body)
    assert titan.attempts == 1  # not retried: access is not transient
    logged = [getattr(r, "error_type", None) for r in caplog.records]
    assert "AccessDeniedException" in logged and not any(CONTENT in r.getMessage() for r in caplog.records)
    assert services.store.count() == 0
