"""`XMemoStore` (a LangGraph `BaseStore`) against the local gateway: its operations, and a
graph run by LangGraph's own runtime whose nodes and tools write and read memories through
the injected store, with fake chat models from `langchain_core`."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode, tools_condition
from langgraph.store.base import BaseStore

from xmemo.client import AsyncXMemo, TeamMismatchError, XMemo
from xmemo.integrations.langgraph import XMemoStore

pytestmark = pytest.mark.e2e


@pytest.fixture
def store(gateway, user):
    token = gateway.token(user, teams=["acme"])
    s = XMemoStore(XMemo(gateway.url, token=token), AsyncXMemo(gateway.url, token=token))
    yield s
    s.client.close()


def test_values_round_trip_as_json_and_put_overwrites(store, gateway, user):
    value = {"text": "Zoë prefers tea ☕", "n": 3, "ratio": 0.25, "ok": True, "none": None, "list": [1, "two", {"three": 3}], "nested": {"a": {"b": []}}}
    store.put(("prefs", "zoe"), "drink", value)
    item = store.get(("prefs", "zoe"), "drink")
    assert item.value == value and item.key == "drink" and item.namespace == ("prefs", "zoe")
    assert store.get(("prefs", "zoe"), "food") is None
    assert store.get(("prefs", "other"), "drink") is None

    store.put(("prefs", "zoe"), "drink", {"text": "Zoë switched to coffee"})
    assert store.get(("prefs", "zoe"), "drink").value == {"text": "Zoë switched to coffee"}
    assert [i.value["text"] for i in store.search(("prefs",))] == ["Zoë switched to coffee"]  # the old version is superseded
    store.put(("prefs", "zoe"), "drink", {"text": "Zoë switched to coffee"})  # unchanged: nothing written

    with XMemo(gateway.url, token=gateway.token(user)) as m:
        stored = list(m.list(bucket="langgraph"))
    assert len(stored) == 1 and stored[0].location == "prefs/zoe" and stored[0].supersedes

    store.delete(("prefs", "zoe"), "drink")
    assert store.get(("prefs", "zoe"), "drink") is None and store.search(("prefs",)) == []


def test_equal_values_under_different_keys_stay_two_items(store):
    store.put(("flags",), "a", {"done": True})
    store.put(("flags",), "b", {"done": True})
    store.put(("other",), "a", {"done": True})
    assert sorted(i.key for i in store.search(("flags",))) == ["a", "b"]
    assert store.get(("other",), "a").value == {"done": True}


def test_search_by_query_filter_prefix_and_pages(store):
    store.put(("docs", "auth"), "cognito", {"topic": "auth", "year": 2025, "text": "Cognito issues the access tokens for MCP"})
    store.put(("docs", "auth"), "scopes", {"topic": "auth", "year": 2026, "text": "scopes are compared as full strings"})
    store.put(("docs", "ops"), "deploys", {"topic": "ops", "year": 2026, "text": "deploys happen on Tuesdays"})

    hits = store.search(("docs",), query="which service issues access tokens")
    assert hits[0].key == "cognito" and hits[0].score is not None
    assert {i.key for i in store.search(("docs", "auth"))} == {"cognito", "scopes"}
    assert [i.key for i in store.search(("docs",), filter={"topic": "ops"})] == ["deploys"]
    assert {i.key for i in store.search(("docs",), filter={"year": {"$gte": 2026}})} == {"scopes", "deploys"}
    assert [i.key for i in store.search(("docs",), query="tokens scopes deploys", filter={"year": {"$lt": 2026}})] == ["cognito"]
    everything = [i.key for i in store.search(("docs",), limit=10)]
    assert [i.key for i in store.search(("docs",), limit=1, offset=1)] == everything[1:2]


def test_list_namespaces(store):
    for ns in [("a", "x", "1"), ("a", "y", "v1"), ("b", "v1"), ("b", "v2")]:
        store.put(ns, "k", {"ns": list(ns)})
    assert store.list_namespaces() == [("a", "x", "1"), ("a", "y", "v1"), ("b", "v1"), ("b", "v2")]
    assert store.list_namespaces(prefix=("a",)) == [("a", "x", "1"), ("a", "y", "v1")]
    assert store.list_namespaces(suffix=("v1",)) == [("a", "y", "v1"), ("b", "v1")]
    assert store.list_namespaces(prefix=("a", "*", "v1")) == [("a", "y", "v1")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",)]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "y", "v1"), ("b", "v1")]


def test_team_and_project_labels_are_xmemo_boundaries(store, gateway, user):
    ns = ("team:acme", "project:orion", "decisions")
    store.put(ns, "db", {"text": "Orion stores memories in OpenSearch"})
    with XMemo(gateway.url, token=gateway.token(user, teams=["acme"])) as m:
        [memory] = m.list(bucket="langgraph")
    assert memory.boundary == "team:acme/project:orion" and memory.team == "acme"

    teammate_token = gateway.token(f"mate-{uuid.uuid4().hex[:6]}", teams=["acme"])
    teammate = XMemoStore(XMemo(gateway.url, token=teammate_token))
    assert teammate.get(ns, "db").value == {"text": "Orion stores memories in OpenSearch"}
    outsider = XMemoStore(XMemo(gateway.url, token=gateway.token(f"out-{uuid.uuid4().hex[:6]}")))
    with pytest.raises(TeamMismatchError):
        outsider.get(ns, "db")
    assert outsider.search(("decisions",)) == []  # the label path alone finds nothing of another boundary


def test_async_operations(store):
    async def run():
        await store.aput(("async",), "k", {"v": 1})
        await store.aput(("async",), "k", {"v": 2})
        assert (await store.aget(("async",), "k")).value == {"v": 2}
        assert [i.value for i in await store.asearch(("async",))] == [{"v": 2}]
        assert await store.alist_namespaces(prefix=("async",)) == [("async",)]
        await store.adelete(("async",), "k")
        assert await store.aget(("async",), "k") is None

    asyncio.run(run())


# ---------------------------------------------------------------------------------------
# a graph run by LangGraph's runtime, its nodes and tools given the store by LangGraph
class Prompts(BaseCallbackHandler):
    """What each chat-model call was shown (langchain_core's own callback)."""

    def __init__(self):
        self.seen: list[list[str]] = []

    def on_chat_model_start(self, serialized, messages, **kwargs):
        self.seen.append([m.content for m in messages[0]])


@tool
def save_fact(fact: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]) -> str:
    """Save a durable fact about the user."""
    store.put(("memories", config["configurable"]["user_id"]), uuid.uuid4().hex, {"fact": fact})
    return "saved"


def memory_graph(store: BaseStore, model):
    """An agent that reads what it knows about the user before each model call, and saves
    facts through a tool: the pattern of LangGraph's long-term memory guide."""

    def agent(state: MessagesState, config: RunnableConfig, *, store: BaseStore):
        question = next(m.content for m in reversed(state["messages"]) if isinstance(m, HumanMessage))
        known = store.search(("memories", config["configurable"]["user_id"]), query=question, limit=3)
        system = SystemMessage("What you know about the user:\n" + "\n".join(f"- {i.value['fact']}" for i in known))
        return {"messages": [model.invoke([system, *state["messages"]])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([save_fact]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(checkpointer=InMemorySaver(), store=store)


def test_a_langgraph_agent_remembers_across_threads(store, gateway, user):
    model = GenericFakeChatModel(messages=iter([
        AIMessage("", tool_calls=[{"name": "save_fact", "args": {"fact": "prefers window seats on long flights"}, "id": "call-1"}]),
        AIMessage("Noted: window seats."),
        AIMessage("Book a window seat."),
    ]))
    graph = memory_graph(store, model)
    prompts = Prompts()

    first = graph.invoke({"messages": [HumanMessage("Remember: I prefer window seats on long flights.")]},
                         {"configurable": {"thread_id": "t1", "user_id": "alice"}, "callbacks": [prompts]})
    assert first["messages"][-1].content == "Noted: window seats."
    assert prompts.seen[0][0] == "What you know about the user:\n"  # nothing known yet

    second = graph.invoke({"messages": [HumanMessage("Which seats do I prefer on flights?")]},
                          {"configurable": {"thread_id": "t2", "user_id": "alice"}, "callbacks": [prompts]})
    assert second["messages"][-1].content == "Book a window seat."
    assert len(second["messages"]) == 2  # a new thread: the first conversation is not in its state
    assert prompts.seen[-1][0] == "What you know about the user:\n- prefers window seats on long flights"

    with XMemo(gateway.url, token=gateway.token(user)) as m:
        [memory] = m.list(bucket="langgraph")
        assert memory.location == "memories/alice"
        assert m.recall("window seats").results[0].reference == memory.reference  # plain XMemo sees it too


def test_an_async_langgraph_graph_uses_abatch(gateway, user):
    token = gateway.token(user)
    store = XMemoStore(aclient=AsyncXMemo(gateway.url, token=token))

    async def remember(state: MessagesState, config: RunnableConfig, *, store: BaseStore):
        await store.aput(("notes", config["configurable"]["user_id"]), "last", {"said": state["messages"][-1].content})
        return {}

    async def answer(state: MessagesState, config: RunnableConfig, *, store: BaseStore):
        item = await store.aget(("notes", config["configurable"]["user_id"]), "last")
        reply = await GenericFakeChatModel(messages=iter([f"You said: {item.value['said']}"])).ainvoke(state["messages"])
        return {"messages": [reply]}

    graph = StateGraph(MessagesState)
    graph.add_node("remember", remember)
    graph.add_node("answer", answer)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "answer")
    graph.add_edge("answer", END)
    app = graph.compile(store=store)
    out = asyncio.run(app.ainvoke({"messages": [HumanMessage("the kettle is broken")]}, {"configurable": {"user_id": "bob"}}))
    assert out["messages"][-1].content == "You said: the kettle is broken"
    with XMemo(gateway.url, token=token) as m:
        assert [x.location for x in m.list(bucket="langgraph")] == ["notes/bob"]
    with pytest.raises(RuntimeError):
        store.get(("notes", "bob"), "last")  # sync needs the sync client
