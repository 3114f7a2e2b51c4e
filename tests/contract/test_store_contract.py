"""The store contract, run on both stores: CRUD, visibility, filters, lexical behaviour,
budgets, lifecycle (duplicates, supersede, expiry, purge, forget counts) and errors."""

from __future__ import annotations

from datetime import timedelta

import pytest

from xmemo import tools
from xmemo.auth import read_filter
from xmemo.embedding import passage_embeddings
from xmemo.errors import InsufficientScope, InvalidRequest, NotFound, TeamMismatch
from xmemo.models import (
    ContextInput,
    ForgetInput,
    GetInput,
    ListInput,
    RecallInput,
    RememberInput,
    SearchInput,
)


def remember(svc, who, content, **kw):
    return tools.remember(svc, who, RememberInput(content=content, **kw))


def recall_refs(svc, who, query, **kw):
    return [h.reference for h in tools.recall(svc, who, RecallInput(query=query, **kw)).results]


def search_refs(svc, who, query, **kw):
    return [h.reference for h in tools.search_memory(svc, who, SearchInput(query=query, **kw)).results]


# -- CRUD ------------------------------------------------------------------------------------
def test_remember_then_get_round_trips_every_field(svc, person):
    alice = person("alice", teams=("acme",))
    stored = remember(
        svc, alice, "  Deploys run through the blue-green pipeline.  ", type="procedure", location="ops/deploy",
        bucket="ops", team="acme", project="infra", tags=["deploy", "ci"], title="Deploys",
    ).memory
    got = tools.get_memory(svc, alice, GetInput(reference=stored.reference)).memory
    assert got == stored
    assert got.content == "Deploys run through the blue-green pipeline."
    assert (got.boundary, got.holder, got.tags) == ("team:acme/project:infra", "team:acme", ("deploy", "ci"))
    assert got.created_at == stored.created_at and got.expires_at is None


def test_recall_right_after_remember_finds_it(svc, person):
    alice = person("alice")
    ref = remember(svc, alice, "The staging database password rotates every Monday").memory.reference
    assert recall_refs(svc, alice, "when does the staging password rotate") == [ref]


def test_list_is_newest_first_and_pages_with_a_cursor(svc, person):
    alice = person("alice")
    refs = [remember(svc, alice, f"memory number {i}").memory.reference for i in range(5)]
    seen, cursor = [], None
    for _ in range(3):
        page = tools.list_memories(svc, alice, ListInput(limit=2, cursor=cursor))
        seen += [m.reference for m in page.memories]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == list(reversed(refs)) and cursor is None


def test_a_cursor_not_issued_by_the_service_is_invalid(svc, person):
    with pytest.raises(InvalidRequest):
        tools.list_memories(svc, person("alice"), ListInput(cursor="not-a-cursor"))


# -- visibility -----------------------------------------------------------------------------
def test_private_memories_are_invisible_to_others(svc, person):
    alice, bob = person("alice"), person("bob")
    ref = remember(svc, alice, "Alice's launch codes are in the blue folder").memory.reference
    remember(svc, bob, "Bob likes the blue folder")
    assert ref not in recall_refs(svc, bob, "blue folder launch codes")
    assert search_refs(svc, bob, "launch codes") == []
    assert ref not in [m.reference for m in tools.list_memories(svc, bob, ListInput()).memories]
    with pytest.raises(NotFound):
        tools.get_memory(svc, bob, GetInput(reference=ref))
    with pytest.raises(NotFound):
        tools.forget(svc, bob, ForgetInput(reference=ref))
    assert tools.forget(svc, bob, ForgetInput(bucket="default")).deleted == 1  # only Bob's own
    assert tools.get_memory(svc, alice, GetInput(reference=ref)).memory.reference == ref


def test_team_memories_are_shared_with_members_only(svc, person):
    alice, carol, eve = person("alice", teams=("acme",)), person("carol", teams=("acme",)), person("eve", teams=("other",))
    ref = remember(svc, alice, "Acme ships on Thursdays", team="acme").memory.reference
    assert recall_refs(svc, carol, "when does acme ship") == [ref]
    assert recall_refs(svc, eve, "when does acme ship") == []
    with pytest.raises(TeamMismatch):
        tools.recall(svc, eve, RecallInput(query="ship", team="acme"))
    # naming the team narrows to the team: the caller's private memories drop out
    mine = remember(svc, carol, "Carol ships her own things on Thursdays").memory.reference
    assert search_refs(svc, carol, "thursdays", team="acme") == [ref]
    assert set(search_refs(svc, carol, "thursdays")) == {ref, mine}


# -- filters --------------------------------------------------------------------------------------
def test_filters_are_exact_and_tags_are_all_of(svc, person, clock):
    alice = person("alice")
    a = remember(svc, alice, "cache invalidation notes", bucket="eng", type="fact", tags=["cache", "perf"], project="web").memory
    b = remember(svc, alice, "cache sizing notes", bucket="eng", type="decision", tags=["cache"]).memory
    c = remember(svc, alice, "cache eviction notes", bucket="ops", type="fact", tags=["perf"]).memory
    q = "cache notes"
    assert set(search_refs(svc, alice, q)) == {a.reference, b.reference, c.reference}
    assert set(search_refs(svc, alice, q, bucket="eng")) == {a.reference, b.reference}
    assert search_refs(svc, alice, q, type="decision") == [b.reference]
    assert search_refs(svc, alice, q, tags=["cache", "perf"]) == [a.reference]
    assert search_refs(svc, alice, q, project="web") == [a.reference]
    assert set(search_refs(svc, alice, q, created_after=b.created_at)) == {b.reference, c.reference}
    assert set(search_refs(svc, alice, q, created_before=b.created_at)) == {a.reference}
    assert set(recall_refs(svc, alice, q, bucket="ops", limit=20)) == {c.reference}


# -- lexical behaviour ------------------------------------------------------------------------
def test_search_memory_is_strict_and_recall_is_tolerant(svc, person):
    alice = person("alice")
    both = remember(svc, alice, "Postgres is the billing database").memory.reference
    one = remember(svc, alice, "Postgres runs the analytics warehouse").memory.reference
    assert search_refs(svc, alice, "postgres billing") == [both]
    assert search_refs(svc, alice, "postgres invoices") == []
    assert set(recall_refs(svc, alice, "postgres invoices")) == {both, one}


def test_more_matching_terms_rank_higher(svc, person):
    alice = person("alice")
    weak = remember(svc, alice, "The kafka cluster was upgraded last week").memory.reference
    strong = remember(svc, alice, "Kafka consumer lag alerts page the on-call engineer").memory.reference
    remember(svc, alice, "Lunch is at noon")
    assert recall_refs(svc, alice, "kafka consumer lag alerts")[:2] == [strong, weak]


def test_word_forms_accents_and_elision_match(svc, person):
    alice = person("alice")
    en = remember(svc, alice, "Running the database migrations nightly").memory.reference
    fr = remember(svc, alice, "L'équipe a décidé d'utiliser Postgres").memory.reference
    assert en in recall_refs(svc, alice, "migration ran")
    assert search_refs(svc, alice, "equipe") == [fr]        # accent folded, l' elided
    assert search_refs(svc, alice, "décidé utiliser") == [fr]


def test_korean_partial_words_and_chinese_match(svc, person):
    alice = person("alice")
    ko = remember(svc, alice, "배포 작업을 완료했습니다").memory.reference
    zh = remember(svc, alice, "数据库迁移已经完成").memory.reference
    assert search_refs(svc, alice, "작업") == [ko]
    assert recall_refs(svc, alice, "작업 완료") == [ko]
    assert search_refs(svc, alice, "迁移") == [zh]
    assert search_refs(svc, alice, "작업 迁移") == []


# -- budgets through the tools ----------------------------------------------------------------
def test_recall_context_respects_the_budget(svc, person):
    alice = person("alice")
    for i in range(6):
        remember(svc, alice, f"Incident {i}: the payment gateway timed out; " + "retry with backoff. " * 20)
    pack = tools.recall_context(svc, alice, ContextInput(query="payment gateway incident", max_items=4, max_tokens=120))
    b = pack.budget
    assert 1 <= b.used_items <= 4 and b.used_tokens <= 120
    assert b.used_items == len(pack.items) and b.dropped >= 2


# -- lifecycle --------------------------------------------------------------------------------
def test_same_content_same_boundary_and_bucket_is_a_duplicate(svc, person):
    alice = person("alice", teams=("acme",))
    first = remember(svc, alice, "Use UTC in logs")
    again = remember(svc, alice, "Use   UTC in logs ")
    assert again.duplicate and again.memory.reference == first.memory.reference
    assert not remember(svc, alice, "Use UTC in logs", bucket="ops").duplicate
    assert not remember(svc, alice, "Use UTC in logs", team="acme").duplicate
    assert not remember(svc, alice, "Use UTC in logs", temporary=True).duplicate
    assert not remember(svc, person("bob"), "Use UTC in logs").duplicate
    assert svc.store.count() == 5


def test_temporary_memories_need_the_scope_and_expire(svc, person, clock):
    alice, alice_t = person("alice"), person("alice", temporary=True)
    ref = remember(svc, alice, "scratch: try the new index", temporary=True, ttl_seconds=60).memory.reference
    assert recall_refs(svc, alice, "new index") == []
    with pytest.raises(InsufficientScope):
        tools.recall(svc, alice, RecallInput(query="new index", include_temporary=True))
    assert recall_refs(svc, alice_t, "new index", include_temporary=True) == [ref]
    clock.advance(61)
    assert recall_refs(svc, alice_t, "new index", include_temporary=True) == []
    with pytest.raises(NotFound):
        tools.get_memory(svc, alice_t, GetInput(reference=ref))
    assert tools.purge_expired(svc) == 1
    assert svc.store.count() == 0


def test_an_expired_duplicate_is_replaced_by_a_new_memory(svc, person, clock):
    alice = person("alice", temporary=True)
    old = remember(svc, alice, "temporary token cache", temporary=True, ttl_seconds=60).memory
    clock.advance(120)
    new = remember(svc, alice, "temporary token cache", temporary=True, ttl_seconds=60)
    assert not new.duplicate and new.memory.reference != old.reference
    assert svc.store.count() == 1
    assert recall_refs(svc, alice, "token cache", include_temporary=True) == [new.memory.reference]


def test_supersede_hides_the_old_memory_and_forget_reaches_both(svc, person):
    alice = person("alice")
    old = remember(svc, alice, "Deploy on Fridays").memory.reference
    new = tools.remember(svc, alice, RememberInput(content="Never deploy on Fridays", supersedes=old)).memory
    assert new.supersedes == old
    assert recall_refs(svc, alice, "deploy fridays") == [new.reference]
    with pytest.raises(NotFound):
        tools.get_memory(svc, alice, GetInput(reference=old))
    with pytest.raises(NotFound):  # superseding something invisible is refused
        tools.remember(svc, person("bob"), RememberInput(content="x", supersedes=new.reference))
    # the superseded content may be remembered again: a new memory, the history kept
    again = remember(svc, alice, "Deploy on Fridays")
    assert not again.duplicate and again.memory.reference != old
    assert svc.store.count() == 3
    assert tools.forget(svc, alice, ForgetInput(bucket="default")).deleted == 3


def test_forget_counts_by_filter_and_by_reference(svc, person):
    alice = person("alice")
    refs = [remember(svc, alice, f"note {i}", tags=["x"] if i % 2 else []).memory.reference for i in range(5)]
    assert tools.forget(svc, alice, ForgetInput(tags=["x"])).deleted == 2
    assert tools.forget(svc, alice, ForgetInput(reference=refs[0])).deleted == 1
    with pytest.raises(NotFound):
        tools.forget(svc, alice, ForgetInput(reference=refs[0]))
    assert tools.forget(svc, alice, ForgetInput(tags=["x"])).deleted == 0
    assert svc.store.count() == 2


def test_forget_by_filter_reaches_temporary_only_with_the_scope(svc, person):
    remember(svc, person("alice"), "temp note", temporary=True)
    remember(svc, person("alice"), "kept note")
    assert tools.forget(svc, person("alice"), ForgetInput(bucket="default")).deleted == 1
    assert tools.forget(svc, person("alice", temporary=True), ForgetInput(bucket="default")).deleted == 1
    assert svc.store.count() == 0


# -- the store directly ------------------------------------------------------------------------
def test_nothing_is_visible_without_holders(store, person, clock):
    from dataclasses import replace

    svc_rf = read_filter(person("alice"), clock())
    empty = replace(svc_rf, holders=frozenset())
    assert store.search("anything", None, empty, lexical_k=10, semantic_k=0, strict=False).lexical == []
    assert store.list(empty, 10, None) == ([], None)
    assert store.delete(empty) == 0


def test_whole_records_by_reference_only_within_the_read_filter(svc, person, clock):
    """`MemoryStore.memories`: what a read returns of partial candidates, the same records
    `get` gives, only those the caller may see."""
    alice, bob = person("alice"), person("bob")
    a = remember(svc, alice, "The ferry leaves at nine", location="travel", tags=["ferry"]).memory
    b = remember(svc, bob, "Bob's ferry leaves at ten").memory
    got = svc.store.memories([a.reference, b.reference, "mem_unknown"], read_filter(alice, clock()))
    assert got == {a.reference: tools.get_memory(svc, alice, GetInput(reference=a.reference)).memory}
    assert svc.store.memories([], read_filter(alice, clock())) == {}


def test_bulk_import_matches_one_by_one_inserts(store, person, clock):
    from xmemo.ids import new_reference
    from xmemo.models import Memory
    from xmemo.tools import content_hash

    def mem(content, bucket="default"):
        now = clock()
        return Memory(
            reference=new_reference(int(now.timestamp() * 1000)), type="note", content=content, location=bucket,
            bucket=bucket, owner="alice", boundary="owner:alice", created_at=now, updated_at=now,
            content_sha256=content_hash(content),
        )

    batch = [mem(f"imported fact {i}") for i in range(30)] + [mem("imported fact 3"), mem("imported fact 3", "other")]
    results = store.insert_many(batch)
    assert [d for _, d in results] == [False] * 30 + [True, False]
    assert results[30][0].reference == batch[3].reference
    assert store.count() == 31
    rf = read_filter(person("alice"), clock())
    assert len(store.search("imported fact", None, rf, lexical_k=50, semantic_k=0, strict=True).lexical) == 31


# -- semantic leg (k-NN) ------------------------------------------------------------------------
@pytest.mark.knn
@pytest.mark.embedder
def test_recall_finds_a_paraphrase_through_the_semantic_leg(semantic_svc, person):
    alice, bob = person("alice"), person("bob")
    ref = remember(semantic_svc, alice, "The office cat is named Biscuit").memory.reference
    for i in range(5):  # other tenants' nearer vectors must not crowd Alice's out
        remember(semantic_svc, bob, f"The office cat is named Biscuit {i}")
    result = tools.recall(semantic_svc, alice, RecallInput(query="what is our feline pet called"))
    assert [h.reference for h in result.results] == [ref]
    assert result.retrieval_plan["semantic"]["candidates"] >= 1


@pytest.mark.knn
@pytest.mark.embedder
def test_token_states_are_stored_with_remember_and_read_within_the_read_filter(semantic_svc, person, clock):
    """Both stores keep what `remember` computed, byte for byte, and give a pool's states only
    to a caller who may read those memories (the late-interaction leg's input)."""
    alice, bob = person("alice", temporary=True), person("bob")
    texts = ["The ferry leaves at nine", "Pick up the keys", "Budget review on Friday"]
    a = remember(semantic_svc, alice, texts[0]).memory.reference
    t = remember(semantic_svc, alice, texts[1], temporary=True).memory.reference
    b = remember(semantic_svc, bob, texts[2]).memory.reference
    want = dict(zip([a, t, b], passage_embeddings(semantic_svc.embedder, texts)[1]))
    refs, store = [a, t, b, "mem_unknown"], semantic_svc.store
    assert store.token_states(refs, read_filter(alice, clock())) == {a: want[a]}
    assert store.token_states(refs, read_filter(alice, clock(), include_temporary=True)) == {a: want[a], t: want[t]}
    assert store.token_states(refs, read_filter(bob, clock())) == {b: want[b]}
    assert store.token_states([], read_filter(alice, clock())) == {}
    # the records of a pool come with the same states, within the same filter (`MemoryStore.memories`)
    got = store.memories(refs, read_filter(alice, clock(), include_temporary=True), states=True)
    assert {r: m.token_states for r, m in got.items()} == {a: want[a], t: want[t]}
    assert got[a].content == texts[0] and store.memories(refs, read_filter(bob, clock()))[b].token_states is None


# -- the ranking profile ------------------------------------------------------------------------
def test_every_retrieval_plan_names_the_ranking_profile(svc, person):
    from xmemo.ranking_profile import PROFILE

    alice = person("alice")
    remember(svc, alice, "The ferry to the island leaves at nine")
    for result in (tools.recall(svc, alice, RecallInput(query="ferry")), tools.search_memory(svc, alice, SearchInput(query="ferry")),
                   tools.recall_context(svc, alice, ContextInput(query="ferry"))):
        assert result.retrieval_plan["profile"] == {"name": PROFILE.name, "version": PROFILE.version}
