"""`memory_toolset` run by Pydantic AI's own agent loop, with its `FunctionModel` (a fake
model a test scripts), against the local gateway over HTTP."""

from __future__ import annotations

import asyncio

import httpx

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from xmemo.client import AsyncXMemo, XMemo
from xmemo.integrations.pydantic_ai import TOOLS, memory_toolset

pytestmark = pytest.mark.e2e


def scripted(*turns):
    """A FunctionModel that answers with `turns` in order: each a list of parts or a
    function of the messages so far; it records what it was shown."""
    seen: list[AgentInfo] = []
    queue = list(turns)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        turn = queue.pop(0)
        return ModelResponse(parts=turn(messages) if callable(turn) else turn)

    return FunctionModel(model), seen


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]


def test_an_agent_remembers_and_recalls_through_the_toolset(gateway, user):
    model, seen = scripted(
        [ToolCallPart("remember", {"content": "The user prefers aisle seats on short flights.", "type": "preference", "location": "travel/preferences"})],
        [ToolCallPart("recall", {"query": "which seat does the user prefer", "limit": 3})],
        lambda messages: [TextPart("Answer from memory: " + tool_returns(messages)[-1].content.splitlines()[3].strip())],
    )
    with XMemo(gateway.url, token=gateway.token(user)) as client:
        agent = Agent(model, toolsets=[memory_toolset(client)])
        result = agent.run_sync("Remember that I prefer aisle seats on short flights, then tell me what I prefer.")
        stored, recalled = tool_returns(result.all_messages())
        assert stored.content.startswith("Stored: Reference: mem_") and stored.content.endswith("| Type: preference | Location: travel/preferences")
        assert recalled.content.startswith("### XMemo Recall\nResults: 1\n1. Reference: mem_")
        assert result.output == "Answer from memory: The user prefers aisle seats on short flights."
        [memory] = client.list()
        assert memory.type == "preference" and stored.content.split("Reference: ")[1].startswith(memory.reference)

    # the agent is shown the tools an MCP client of the public profile is shown
    listed = httpx.post(f"{gateway.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30,
                        headers={"Authorization": f"Bearer {gateway.token(user)}", "MCP-Protocol-Version": "2025-06-18",
                                 "Accept": "application/json, text/event-stream"}).json()["result"]["tools"]
    shown = {t.name: t for t in seen[0].function_tools}
    assert set(shown) == set(TOOLS) == {t["name"] for t in listed}
    for mcp_tool in listed:
        tool = shown[mcp_tool["name"]]
        assert tool.description == mcp_tool["description"]
        schema = tool.parameters_json_schema
        assert schema["properties"].keys() == mcp_tool["inputSchema"]["properties"].keys()
        assert schema.get("required", []) == mcp_tool["inputSchema"].get("required", [])
        for name, prop in mcp_tool["inputSchema"]["properties"].items():
            assert {k: v for k, v in schema["properties"][name].items() if k != "title"} == prop


def test_bad_arguments_go_back_to_the_model_and_refusals_are_answers(gateway, user):
    model, _ = scripted(
        [ToolCallPart("recall", {"query": "anything", "limit": 99})],  # out of bounds: the model is asked again
        [ToolCallPart("recall", {"query": "anything", "limit": 2}), ToolCallPart("search_memory", {"query": "anything", "team": "not-mine"})],
        [TextPart("done")],
    )
    with XMemo(gateway.url, token=gateway.token(user)) as client:
        result = Agent(model, toolsets=[memory_toolset(client)]).run_sync("look something up")
    returned = tool_returns(result.all_messages())
    retried = [p for p in returned if p.outcome == "retried"]  # Pydantic AI's record of a ModelRetry
    assert len(retried) == 1 and retried[0].content == "invalid arguments: limit: Input should be less than or equal to 20"
    answers = {p.tool_name: p.content for p in returned if p.outcome != "retried"}
    assert answers["recall"] == "No matching XMemo memory was found."
    assert answers["search_memory"].startswith("Error 403 team_mismatch: ")


def test_async_toolset_with_an_async_agent_run(gateway, user):
    model, seen = scripted(
        [ToolCallPart("remember", {"content": "Deploys are frozen during the last week of December.", "type": "decision"})],
        [ToolCallPart("recall_context", {"query": "deploy freeze", "max_tokens": 100})],
        lambda messages: [TextPart(tool_returns(messages)[-1].content)],
    )

    async def run():
        async with AsyncXMemo(gateway.url, token=gateway.token(user)) as client:
            return await Agent(model, toolsets=[memory_toolset(client)]).run("when are deploys frozen?")

    result = asyncio.run(run())
    assert result.output.startswith("### XMemo Context\nItems: 1\n")
    assert result.output.endswith("Context:\n[1] Deploys are frozen during the last week of December.")


def test_read_only_toolset_has_no_remember(gateway, user):
    model, seen = scripted([TextPart("nothing to do")])
    with XMemo(gateway.url, token=gateway.token(user, "memory:read")) as client:
        Agent(model, toolsets=[memory_toolset(client, read_only=True)]).run_sync("hello")
    assert sorted(t.name for t in seen[0].function_tools) == ["recall", "recall_context", "search_memory"]
