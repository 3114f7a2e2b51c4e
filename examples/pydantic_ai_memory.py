"""A Pydantic AI agent with XMemo's tools (`memory_toolset`): remember, recall,
search_memory and recall_context, as an MCP client sees them.

    make run                                   # in another terminal: prints a token
    XMEMO_TOKEN=<token> .venv/bin/python examples/pydantic_ai_memory.py

The model is Pydantic AI's FunctionModel, scripted so this runs offline; pass a real one
(`Agent("openai:gpt-4.1", toolsets=[...])`) instead."""

from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from xmemo.client import XMemo
from xmemo.integrations.pydantic_ai import memory_toolset


def scripted_model(messages, info):
    """Remember, then recall, then answer with what the recall returned."""
    returned = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, ToolReturnPart)]
    if not returned:
        return ModelResponse(parts=[ToolCallPart("remember", {
            "content": "The user prefers aisle seats on short flights.", "type": "preference", "bucket": "examples"})])
    if len(returned) == 1:
        return ModelResponse(parts=[ToolCallPart("recall", {"query": "which seat does the user prefer?", "limit": 3})])
    return ModelResponse(parts=[TextPart(f"From memory:\n{returned[-1].content}")])


with XMemo() as client:
    agent = Agent(FunctionModel(scripted_model), toolsets=[memory_toolset(client)])
    result = agent.run_sync("Remember that I prefer aisle seats on short flights, then tell me what I prefer.")
    for message in result.all_messages():
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                print(f"{part.tool_name} → {part.content.splitlines()[0]}")
    print(result.output)
    print("forgot:", client.forget(bucket="examples").deleted)
