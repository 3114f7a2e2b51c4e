"""One package owns retrieval, on both stores: the three reading tools rank through the one
entry point (`xmemo.retrieval.pipeline.retrieve`), and every search a read makes of the
store is made from inside it."""

from __future__ import annotations

from xmemo import tools
from xmemo.models import ContextInput, RecallInput, RememberInput, SearchInput
from xmemo.retrieval import pipeline


def test_every_reading_tool_ranks_through_the_one_entry_point(svc, person, monkeypatch):
    alice = person("alice")
    stored = tools.remember(svc, alice, RememberInput(content="The ferry to the island leaves at nine")).memory
    entered: list[dict] = []
    depth = [0]
    real_retrieve, real_search = pipeline.retrieve, svc.store.search

    def retrieve(store, *args, **kw):
        assert store is svc.store  # the configured store, reached through `MemoryStore`
        entered.append({"strict": kw.get("strict", False), "wanted": kw.get("wanted", 0)})
        depth[0] += 1
        try:
            return real_retrieve(store, *args, **kw)
        finally:
            depth[0] -= 1

    def search(*args, **kw):
        assert depth[0] == 1, "a read searched the store outside the retrieval entry point"
        return real_search(*args, **kw)

    monkeypatch.setattr(pipeline, "retrieve", retrieve)
    monkeypatch.setattr(svc.store, "search", search)
    recalled = tools.recall(svc, alice, RecallInput(query="ferry island"))
    searched = tools.search_memory(svc, alice, SearchInput(query="ferry island", limit=7))
    packed = tools.recall_context(svc, alice, ContextInput(query="ferry island", max_items=40))
    assert [h.reference for h in recalled.results] == [stored.reference]
    assert [h.reference for h in searched.results] == [stored.reference]
    assert [i.reference for i in packed.items] == [stored.reference]
    # tolerant, strict with the caller's limit, tolerant with twice the pack's items per leg
    assert entered == [{"strict": False, "wanted": 0}, {"strict": True, "wanted": 7}, {"strict": False, "wanted": 80}]


def test_the_plan_names_the_settings_an_override_moved_off_the_profile(svc, person):
    from xmemo.retrieval.profile import PROFILE
    from xmemo.services import Services

    alice = person("alice")
    tools.remember(svc, alice, RememberInput(content="The ferry to the island leaves at nine"))
    moved = Services(svc.settings.model_copy(update={"late_weight": 0.25, "group_weight": 0.0, "min_useful_tokens": 30}), svc.store, svc.embedder, svc.clock)
    same = {"name": PROFILE.name, "version": PROFILE.version}
    for tool, inp in ((tools.recall, RecallInput(query="ferry")), (tools.search_memory, SearchInput(query="ferry"))):
        assert tool(svc, alice, inp).retrieval_plan["profile"] == same
        assert tool(moved, alice, inp).retrieval_plan["profile"] == {**same, "overridden": ["group_weight", "late_weight"]}
    packed = tools.recall_context(moved, alice, ContextInput(query="ferry"))
    assert packed.retrieval_plan["profile"] == {**same, "overridden": ["group_weight", "late_weight", "min_useful_tokens"]}
