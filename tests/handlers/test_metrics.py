"""The handlers' CloudWatch metrics (EMF lines on stdout): one `ToolCalls` line per call
when metrics are on, and nothing at all when they are off. Powertools, when disabled,
skips the flush but keeps what was added and prints it all once 100 values collect:
the local gateway printed a metrics blob every hundred calls before `api.add_count`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import make_principal  # noqa: F401  (fixtures of the handler tests)
from xmemo import api

EVENTS = Path(__file__).resolve().parents[2] / "events"


def emf_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{") and '"_aws"' in line]


def test_no_metrics_are_printed_when_disabled(invoke, capsys, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    event = json.loads((EVENTS / "recall" / "valid.json").read_text())
    capsys.readouterr()
    for _ in range(101):  # Powertools prints its pile at 100 values
        assert invoke(event)[0] == 200
    assert emf_lines(capsys.readouterr().out) == []


def test_each_call_prints_its_tool_count_when_enabled(invoke, capsys, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    event = json.loads((EVENTS / "recall" / "valid.json").read_text())
    capsys.readouterr()
    for _ in range(3):
        assert invoke(event)[0] == 200
    calls = [m for m in emf_lines(capsys.readouterr().out) if "ToolCalls" in m]
    assert len(calls) == 3 and all(m["tool"] == "recall" and m["ToolCalls"] == [1.0] for m in calls)


def test_mcp_tool_calls_are_counted_like_rest_calls(invoke, capsys, monkeypatch):
    """The MCP function is on the same edge: a `tools/call` adds one `ToolCalls` line with
    the tool's name, exactly as the REST route of that tool does (`tools/list` adds none),
    and its logs carry the request's correlation id."""
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    rest = json.loads((EVENTS / "recall_context" / "valid.json").read_text())
    mcp = json.loads((EVENTS / "mcp" / "tools_call_recall_context.json").read_text())
    listing = json.loads((EVENTS / "mcp" / "tools_list.json").read_text())
    capsys.readouterr()
    assert invoke(rest)[0] == 200
    assert invoke(mcp)[0] == 200
    assert api.logger.get_correlation_id() == mcp["requestContext"]["requestId"]  # logs carry API Gateway's id
    assert invoke(listing)[0] == 200
    calls = [m for m in emf_lines(capsys.readouterr().out) if "ToolCalls" in m]
    assert [(m["tool"], m["ToolCalls"]) for m in calls] == [("recall_context", [1.0])] * 2
    assert calls[0]["_aws"]["CloudWatchMetrics"] == calls[1]["_aws"]["CloudWatchMetrics"]
