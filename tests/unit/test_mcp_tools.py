"""The tools over MCP, through the Lambda entry point: generated definitions, scopes,
the exact SPEC §5 texts, `structuredContent` matching `outputSchema`, and SPEC §6 errors
as `isError` results."""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import replace

import jsonschema
import pytest

from tests.mcp_lambda import invoke_mcp, mcp_pool
from xmemo.config import Settings
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore
from xmemo import results as result_models
from xmemo.mcp import registry

READ, WRITE, TEMP = "xmemo/memory:read", "xmemo/memory:write", "xmemo/memory:temporary"
REF = r"mem_[0-9A-Z]{26}"


@pytest.fixture
def mcp(tmp_path, services):
    settings = Settings(data_dir=tmp_path, embedder="none")
    pool = mcp_pool()

    def mcp(method, params=None, *, path="/mcp", scopes=(READ, WRITE), teams=None, version="2025-11-25", sub="alice"):
        claims = {"sub": sub, "token_use": "access", "scope": " ".join(scopes)}
        if teams:
            claims["custom:teams"] = teams
        event = {"httpMethod": "POST", "resource": path, "path": path,
                 "headers": {"Host": "127.0.0.1:8787", "MCP-Protocol-Version": version, "Content-Type": "application/json"},
                 "body": json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}),
                 "requestContext": {"authorizer": {"claims": claims}}}
        resp = invoke_mcp(pool, replace(services, settings=settings), event)
        assert resp["statusCode"] == 200, resp
        return json.loads(resp["body"])

    return mcp


def call(mcp, name, arguments, **kw):
    return mcp("tools/call", {"name": name, "arguments": arguments}, **kw)["result"]


def text(result):
    assert [c["type"] for c in result["content"]] == ["text"]
    return result["content"][0]["text"]


# -- tools/list ----------------------------------------------------------------------------
def test_a_token_lists_only_the_tools_its_scopes_allow(mcp):
    names = lambda **kw: [t["name"] for t in mcp("tools/list", **kw)["result"]["tools"]]  # noqa: E731
    assert names(scopes=(READ,)) == ["recall_context", "recall", "search_memory"]
    assert names(scopes=(WRITE,)) == ["remember"]
    assert names(scopes=(READ, WRITE)) == ["recall_context", "recall", "search_memory", "remember"]
    assert names(path="/mcp/full", scopes=(READ,)) == ["recall_context", "recall", "search_memory", "get_memory", "list_memories"]
    assert names(path="/mcp/full", scopes=(WRITE,)) == ["remember", "forget"]


def test_input_schemas_are_the_models_schemas(mcp):
    for path, surface in (("/mcp", "public"), ("/mcp/full", "full")):
        listed = {t["name"]: t for t in mcp("tools/list", path=path)["result"]["tools"]}
        for name, tool in registry.catalogue(surface).items():
            schema = listed[name]["inputSchema"]
            model_schema = tool.model.model_json_schema()
            assert set(schema["properties"]) == set(tool.model.model_fields) == set(model_schema["properties"])
            assert schema.get("required", []) == model_schema.get("required", [])
            assert schema["additionalProperties"] is False
            for field, prop in schema["properties"].items():  # bounds and descriptions come from the Field
                expected = {k: v for k, v in model_schema["properties"][field].items() if k != "title"}
                assert prop == expected
            assert listed[name]["description"].startswith(inspect.getdoc(tool.model))


def test_the_public_profile_is_spec_section_3(mcp):
    tools = {t["name"]: t for t in mcp("tools/list")["result"]["tools"]}
    props = {n: list(t["inputSchema"]["properties"]) for n, t in tools.items()}
    assert props == {
        "recall_context": ["query", "max_items", "max_tokens"],
        "recall": ["query", "limit"],
        "search_memory": ["query", "project", "team", "type", "limit"],
        "remember": ["content", "type", "location", "bucket", "team", "project", "tags", "temporary", "ttl_seconds"],
    }
    rc = tools["recall_context"]["inputSchema"]["properties"]
    assert (rc["max_items"]["minimum"], rc["max_items"]["maximum"], rc["max_items"]["default"]) == (1, 50, 8)
    assert (rc["max_tokens"]["minimum"], rc["max_tokens"]["maximum"], rc["max_tokens"]["default"]) == (1, 12000, 1500)
    assert all("outputSchema" not in t for t in tools.values())


def test_descriptions_are_manuals(mcp):
    for t in mcp("tools/list", path="/mcp/full")["result"]["tools"]:
        assert "Returns text" in t["description"], t["name"]
        assert "structuredContent" in t["description"]
    public = {t["name"]: t["description"] for t in mcp("tools/list")["result"]["tools"]}
    assert "`search_memory`" in public["recall"] and "`recall_context`" in public["recall"]
    assert "No matching XMemo memory was found." in public["recall_context"]


def test_annotations(mcp):
    tools = {t["name"]: t["annotations"] for t in mcp("tools/list", path="/mcp/full")["result"]["tools"]}
    for name in ("recall_context", "recall", "search_memory", "get_memory", "list_memories"):
        assert tools[name]["readOnlyHint"] is True and tools[name]["destructiveHint"] is False
    assert tools["remember"]["readOnlyHint"] is False and tools["remember"]["destructiveHint"] is False
    assert tools["remember"]["idempotentHint"] is True  # the same content again stores nothing
    assert tools["forget"] == {"title": "Forget memories", "readOnlyHint": False, "destructiveHint": True,
                               "idempotentHint": True, "openWorldHint": False}


# -- the public profile's exact texts -----------------------------------------------------
def test_public_profile_texts(mcp):
    stored = text(call(mcp, "remember", {"content": "We chose Cognito for MCP authentication.", "type": "decision",
                                         "location": "memory-os/decisions", "project": "memory-os"}))
    assert re.fullmatch(rf"Stored: Reference: ({REF}) \| Type: decision \| Location: memory-os/decisions", stored)
    ref = stored.split()[2]
    dup = text(call(mcp, "remember", {"content": "We  chose Cognito for MCP authentication.", "type": "decision",
                                      "location": "memory-os/decisions", "project": "memory-os"}))
    assert dup == f"Duplicate of: Reference: {ref} | Type: decision | Location: memory-os/decisions"
    redacted = text(call(mcp, "remember", {"content": "deploy key AKIA2E0A8F3B6C9D1E4F for the bucket"}))
    assert re.fullmatch(rf"Stored: Reference: {REF} \| Type: note \| Location: default\nRedacted: \S.*", redacted)

    recall = call(mcp, "recall", {"query": "Cognito authentication decision", "limit": 3})
    assert recall["isError"] is False and "structuredContent" not in recall
    assert text(recall) == (f"### XMemo Recall\nResults: 1\n1. Reference: {ref} | Type: decision | Location: memory-os/decisions"
                            f" | Boundary: owner:alice/project:memory-os\n   We chose Cognito for MCP authentication.")
    search = text(call(mcp, "search_memory", {"query": "Cognito", "project": "memory-os"}))
    assert search.startswith("### XMemo Search\nResults: 1\n1. Reference: " + ref)
    context = text(call(mcp, "recall_context", {"query": "Cognito authentication decision", "max_items": 6, "max_tokens": 1200}))
    assert context == (f"### XMemo Context\nItems: 1\nReference: {ref} | Type: decision | Location: memory-os/decisions\n"
                       "Context:\n[1] We chose Cognito for MCP authentication.")
    for tool in ("recall", "search_memory", "recall_context"):
        assert text(call(mcp, tool, {"query": "a topic that was never saved zebra"})) == "No matching XMemo memory was found."


def test_budget_line_when_something_is_dropped(mcp):
    for n in range(3):
        call(mcp, "remember", {"content": f"Release checklist step {n}: run the migration dry-run before tagging {'x' * n}."})
    out = text(call(mcp, "recall_context", {"query": "release checklist migration", "max_items": 1}))
    lines = out.split("\n")
    assert lines[:2] == ["### XMemo Context", "Items: 1"]
    assert re.fullmatch(r"Budget: used_items=1/1 used_tokens=\d+/1500 dropped=2 shortened=0", lines[2])
    assert re.fullmatch(rf"Reference: {REF} \| Type: note \| Location: default", lines[3])
    assert lines[4] == "Context:" and lines[5].startswith("[1] Release checklist step")


# -- full surface: structuredContent -------------------------------------------------------
def test_full_surface_structured_content_matches_the_output_schema(mcp):
    full = dict(path="/mcp/full")
    schemas = {t["name"]: t["outputSchema"] for t in mcp("tools/list", **full)["result"]["tools"]}
    results = {}
    results["remember"] = call(mcp, "remember", {"content": "Use blue-green deploys for the API.", "title": "Deploys",
                                                 "tags": ["ops"], "type": "procedure"}, **full)
    ref = results["remember"]["structuredContent"]["memory"]["reference"]
    results["recall"] = call(mcp, "recall", {"query": "deploys", "tags": ["ops"]}, **full)
    results["search_memory"] = call(mcp, "search_memory", {"query": "blue-green", "bucket": "default"}, **full)
    results["recall_context"] = call(mcp, "recall_context", {"query": "deploys", "type": "procedure"}, **full)
    results["get_memory"] = call(mcp, "get_memory", {"reference": ref}, **full)
    results["list_memories"] = call(mcp, "list_memories", {"limit": 5}, **full)
    results["forget"] = call(mcp, "forget", {"reference": ref}, **full)
    models = {"remember": result_models.RememberResult, "recall": result_models.RecallResult, "search_memory": result_models.SearchResult,
              "recall_context": result_models.ContextResult, "get_memory": result_models.MemoryResult,
              "list_memories": result_models.ListResult, "forget": result_models.ForgetResult}
    for name, result in results.items():
        assert result["isError"] is False, (name, result)
        jsonschema.Draft202012Validator(schemas[name]).validate(result["structuredContent"])
        models[name].model_validate(result["structuredContent"])
    assert results["recall"]["structuredContent"]["results"][0]["reference"] == ref
    assert results["recall_context"]["structuredContent"]["budget"]["used_items"] == 1
    assert text(results["get_memory"]).startswith(f"Reference: {ref} | Type: procedure | Location: default | Boundary: owner:alice\n")
    assert text(results["list_memories"]) == (f"### XMemo Memories\nResults: 1\n1. Reference: {ref} | Type: procedure"
                                              " | Location: default | Boundary: owner:alice")
    assert text(results["forget"]) == "Deleted: 1" and results["forget"]["structuredContent"] == {"deleted": 1}
    # the same text on both surfaces; and structured output needs 2025-06-18 or later
    old = call(mcp, "recall", {"query": "deploys"}, path="/mcp/full", version="2025-03-26")
    assert "structuredContent" not in old


# -- SPEC §6 errors as isError results ------------------------------------------------------
@pytest.mark.parametrize("name,args,expected", [
    ("recall", {"query": "x", "limit": 21}, "Error 422 out_of_bounds: out of bounds: limit"),
    ("recall_context", {"query": "x", "max_tokens": 12001}, "Error 422 out_of_bounds: out of bounds: max_tokens"),
    ("search_memory", {"query": "x", "limit": 0}, "Error 422 out_of_bounds: out of bounds: limit"),
    ("remember", {"content": "x", "temporary": True, "ttl_seconds": 59}, "Error 422 out_of_bounds: out of bounds: ttl_seconds"),
    ("recall", {"query": "   "}, "Error 400 invalid_request: invalid query"),
    ("recall", {"query": "x", "limit": "5"}, "Error 400 invalid_request: invalid limit"),
    ("recall", {"query": "x", "bucket": "b"}, "Error 400 invalid_request: invalid bucket"),  # not on the public profile
    ("search_memory", {"query": "x", "team": "other"}, "Error 403 team_mismatch: "),
])
def test_tool_failures_are_error_results(mcp, name, args, expected):
    result = call(mcp, name, args)
    assert result["isError"] is True and text(result).startswith(expected)


def test_missing_scopes_are_named(mcp):
    r = call(mcp, "remember", {"content": "x"}, scopes=(READ,))
    assert r["isError"] and text(r) == "Error 403 insufficient_scope: the token lacks the scope xmemo/memory:write"
    r = call(mcp, "recall", {"query": "x"}, scopes=(WRITE,))
    assert r["isError"] and text(r) == "Error 403 insufficient_scope: the token lacks the scope xmemo/memory:read"
    r = call(mcp, "recall", {"query": "x", "include_temporary": True}, path="/mcp/full")
    assert r["isError"] and text(r) == "Error 403 insufficient_scope: the token lacks the scope xmemo/memory:temporary"
    r = call(mcp, "recall", {"query": "x", "include_temporary": True}, path="/mcp/full", scopes=(READ, TEMP))
    assert r["isError"] is False


def test_other_tenants_and_teams(mcp):
    full = dict(path="/mcp/full")
    ref = call(mcp, "remember", {"content": "Alice's private note about pricing."}, **full)["structuredContent"]["memory"]["reference"]
    team = call(mcp, "remember", {"content": "Team pricing decision: flat rate.", "team": "acme"}, teams="acme", **full)
    assert team["isError"] is False
    other = dict(sub="mallory", **full)
    missing = call(mcp, "get_memory", {"reference": ref}, **other)
    assert missing["isError"] and text(missing) == "Error 404 not_found: no memory with that reference is visible to the caller"
    assert text(call(mcp, "get_memory", {"reference": "mem_01JZZZZZZZZZZZZZZZZZZZZZZZ"}, **other)) == text(missing)
    assert text(call(mcp, "recall", {"query": "pricing"}, **other)) == "No matching XMemo memory was found."
    teammate = text(call(mcp, "recall", {"query": "pricing"}, teams="acme", **other))
    assert "Team pricing decision" in teammate and "Alice's private" not in teammate
    assert text(call(mcp, "forget", {"reference": ref}, **other)).startswith("Error 404 not_found")


def test_unknown_tools_are_invalid_params(mcp):
    assert mcp("tools/call", {"name": "forget", "arguments": {"reference": "mem_x"}})["error"]["code"] == -32602
    assert mcp("tools/call", {"arguments": {}})["error"]["code"] == -32602
    assert mcp("tools/call", {"name": "recall", "arguments": [1]})["error"]["code"] == -32602


class BrokenStore(SQLiteStore):
    """A real store whose searches fail with a message that quotes content."""

    def search(self, *args, **kwargs):
        raise RuntimeError("sqlite says: secret content of mem_123")


def test_an_unexpected_failure_leaks_nothing(tmp_path, clock, caplog):
    store = BrokenStore(tmp_path / "xmemo.sqlite3")
    services = Services(Settings(data_dir=tmp_path, embedder="none"), store, None, clock)
    event = {"httpMethod": "POST", "resource": "/mcp", "path": "/mcp", "headers": {"Host": "127.0.0.1"},
             "body": json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "recall", "arguments": {"query": "q"}}}),
             "requestContext": {"authorizer": {"claims": {"sub": "a", "scope": READ}}}}
    resp = invoke_mcp(mcp_pool(), services, event)
    store.close()
    assert json.loads(resp["body"]) == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "internal error"}}
    assert "secret" not in resp["body"] and "Traceback" not in resp["body"]
    # logged by the Powertools logger, as REST failures are: the type, never the message
    failure = next(r for r in caplog.records if r.getMessage() == "tool failed")
    assert failure.name == "xmemo" and failure.tool == "recall" and failure.error_type == "RuntimeError"
    assert not any("secret" in r.getMessage() or "secret" in getattr(r, "error_type", "") for r in caplog.records)
