"""A LangGraph agent with long-term memory in XMemo (`XMemoStore`).

    make run                                   # in another terminal: prints a token
    XMEMO_TOKEN=<token> .venv/bin/python examples/langgraph_memory.py

The chat model is langchain_core's scripted fake so this runs offline; put a real one
(`langchain.chat_models.init_chat_model("openai:gpt-4.1")`) in its place. The first
conversation saves a fact through a tool; the second, in a new thread, finds it in XMemo."""

import uuid
from typing import Annotated

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode, tools_condition
from langgraph.store.base import BaseStore

from xmemo.integrations.langgraph import XMemoStore


@tool
def save_fact(fact: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Save a durable fact about the user."""
    store.put(("memories", config["configurable"]["user_id"]), uuid.uuid4().hex, {"fact": fact})
    return "saved"


model = GenericFakeChatModel(messages=iter([
    AIMessage("", tool_calls=[{"name": "save_fact", "args": {"fact": "prefers window seats on long flights"}, "id": "call-1"}]),
    AIMessage("Noted."),
    AIMessage("You prefer window seats on long flights."),
]))


def agent(state: MessagesState, config: RunnableConfig, *, store: BaseStore):
    question = next(m.content for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
    known = store.search(("memories", config["configurable"]["user_id"]), query=question, limit=3)
    print("  known:", [item.value["fact"] for item in known])
    system = SystemMessage("What you know about the user:\n" + "\n".join(f"- {i.value['fact']}" for i in known))
    return {"messages": [model.invoke([system, *state["messages"]])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([save_fact]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
user = f"example-{uuid.uuid4().hex[:6]}"
store = XMemoStore()  # XMEMO_URL / XMEMO_TOKEN, as XMemo()
graph = builder.compile(checkpointer=InMemorySaver(), store=store)

for thread, said in (("t1", "Remember: I prefer window seats on long flights."), ("t2", "Which seats do I prefer on flights?")):
    print(f"[{thread}] user: {said}")
    out = graph.invoke({"messages": [HumanMessage(said)]}, {"configurable": {"thread_id": thread, "user_id": user}})
    print(f"[{thread}] assistant: {out['messages'][-1].content}")

for item in store.search(("memories", user)):
    store.delete(item.namespace, item.key)  # leave nothing behind
