"""The tools over the embedded store, against SPEC §1–§5 (lexical path; no model)."""

import re

import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.config import Settings
from xmemo.errors import CapturePolicyRefused, InsufficientScope, NotFound, OutOfBounds, TeamMismatch
from xmemo.models import (
    ContextInput,
    ContextPublic,
    ForgetInput,
    GetInput,
    ListInput,
    RecallInput,
    RememberInput,
    SearchInput,
    parse_input,
)
from xmemo import render
from xmemo.render import NO_MATCH
from xmemo.tokens import count

ALICE = make_principal("alice", teams=("acme",))
BOB = make_principal("bob", teams=("acme",))
EVE = make_principal("eve", teams=("evil",))
READER = make_principal("alice", scopes=("memory:read",), teams=("acme",))
TEMP = make_principal("alice", scopes=("memory:read", "memory:write", "memory:temporary"), teams=("acme",))


def remember(svc, who=ALICE, **kw):
    return tools.remember(svc, who, RememberInput(**kw))


def refs(result):
    return [h.reference for h in result.results]


# --------------------------------------------------------------------------- remember
def test_remember_text_and_record(services):
    r = remember(services, content="We chose Cognito for MCP auth.", type="decision", location="memory-os/decisions")
    assert re.fullmatch(r"Stored: Reference: mem_[0-9A-Z]{26} \| Type: decision \| Location: memory-os/decisions", render.text(r))
    m = r.memory
    assert m.boundary == "owner:alice" and m.bucket == "default" and not m.temporary
    assert m.created_at == m.updated_at and m.expires_at is None


def test_location_defaults_to_bucket(services):
    assert remember(services, content="x1").memory.location == "default"
    assert remember(services, content="x2", bucket="ops").memory.location == "ops"


def test_boundaries(services):
    assert remember(services, content="a", project="memory-os").memory.boundary == "owner:alice/project:memory-os"
    assert remember(services, content="b", team="acme").memory.boundary == "team:acme"
    assert remember(services, content="c", team="acme", project="memory-os").memory.boundary == "team:acme/project:memory-os"


def test_remember_into_foreign_team_is_team_mismatch(services):
    with pytest.raises(TeamMismatch):
        remember(services, content="x", team="evil")


def test_remember_needs_write_scope(services):
    with pytest.raises(InsufficientScope) as err:
        remember(services, READER, content="x")
    assert "xmemo/memory:write" in err.value.message


def test_remember_is_durable_recall_right_after_finds_it(services):
    r = remember(services, content="The staging database is PostgreSQL 16")
    assert refs(tools.recall(services, ALICE, RecallInput(query="staging database"))) == [r.memory.reference]


def test_duplicate_same_normalized_content_same_boundary_and_bucket(services):
    first = remember(services, content="Deploys happen on Tuesdays.")
    again = remember(services, content="  Deploys   happen on\nTuesdays. ")
    assert again.duplicate and again.memory.reference == first.memory.reference
    assert render.text(again).startswith(f"Duplicate of: Reference: {first.memory.reference} | Type: note")
    # another bucket, another boundary, a teammate writing to the team: new or shared as the boundary says
    assert not remember(services, content="Deploys happen on Tuesdays.", bucket="ops").duplicate
    assert not remember(services, content="Deploys happen on Tuesdays.", project="p").duplicate
    team = remember(services, content="Deploys happen on Tuesdays.", team="acme")
    assert remember(services, BOB, content="Deploys happen on Tuesdays.", team="acme").memory.reference == team.memory.reference
    assert services.store.count() == 4


def test_redaction_is_reported_and_nothing_verbatim_is_stored(services):
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    r = remember(services, content=f"deploy key {key} lives in the vault")
    assert render.text(r).splitlines()[1] == "Redacted: aws_access_key_id"
    assert key not in r.memory.content
    stored = tools.get_memory(services, ALICE, GetInput(reference=r.memory.reference)).memory
    assert key not in stored.content and "[REDACTED:aws_access_key_id]" in stored.content
    assert tools.search_memory(services, ALICE, SearchInput(query=key)).results == []


def test_reject_policy(services):
    strict = type(services)(Settings(data_dir=services.settings.data_dir, embedder="none", capture_policy="reject"), services.store, None, services.clock)
    with pytest.raises(CapturePolicyRefused):
        tools.remember(strict, ALICE, RememberInput(content="password=correcthorse"))
    assert services.store.count() == 0


def test_redaction_that_overflows_the_bound_is_stored_not_refused(services):
    """The bound applies to what the caller sent: markers longer than their secrets never
    turn accepted content into a refusal (and nothing is truncated)."""
    content = " ".join(["pwd=Zx8!vB3n"] * 615)  # 7,994 chars; each redaction is longer than the secret
    assert len(content) <= 8000
    stored = remember(services, content=content).memory
    assert stored.content == " ".join(["pwd=[REDACTED:password]"] * 615) and len(stored.content) > 8000


@pytest.mark.parametrize("field, bound", [("location", 256), ("title", 200)])
def test_a_redacted_location_or_title_at_its_bound_is_stored(services, field, bound):
    secret = "AKIA" + "QZ7LMRTXW4VPN3DK"  # 20 characters; its marker is 28
    value = "docs/" + "x" * (bound - 5 - 21) + "/" + secret
    assert len(value) == bound
    stored = remember(services, content="the deploy notes", **{field: value}).memory
    assert getattr(stored, field).endswith("[REDACTED:aws_access_key_id]") and secret not in getattr(stored, field)


def test_supersedes_hides_the_old_memory(services):
    old = remember(services, content="Use REST for the agent API", type="decision")
    new = tools.remember(services, ALICE, RememberInput(content="Use MCP for the agent API", type="decision", supersedes=old.memory.reference))
    assert new.memory.supersedes == old.memory.reference
    hits = refs(tools.recall(services, ALICE, RecallInput(query="agent API")))
    assert hits == [new.memory.reference]
    with pytest.raises(NotFound):
        tools.get_memory(services, ALICE, GetInput(reference=old.memory.reference))


def test_cannot_supersede_what_you_cannot_see(services):
    theirs = remember(services, EVE, content="eve's secret plan")
    with pytest.raises(NotFound):
        tools.remember(services, ALICE, RememberInput(content="mine", supersedes=theirs.memory.reference))
    assert tools.get_memory(services, EVE, GetInput(reference=theirs.memory.reference))


# --------------------------------------------------------------------------- visibility
def test_owners_never_see_each_other(services):
    remember(services, content="alice private roadmap notes")
    remember(services, EVE, content="eve private roadmap notes")
    for fn, inp in [
        (tools.recall, RecallInput(query="private roadmap notes")),
        (tools.search_memory, SearchInput(query="private roadmap notes")),
    ]:
        assert [h.owner for h in fn(services, ALICE, inp).results] == ["alice"]
        assert [h.owner for h in fn(services, EVE, inp).results] == ["eve"]
    ctx = tools.recall_context(services, EVE, ContextInput(query="private roadmap notes"))
    assert "alice" not in ctx.context_text and len(ctx.items) == 1


def test_team_memories_are_shared_with_members_only(services):
    m = remember(services, content="acme release checklist", team="acme").memory
    assert refs(tools.recall(services, BOB, RecallInput(query="release checklist"))) == [m.reference]
    assert tools.recall(services, EVE, RecallInput(query="release checklist")).results == []
    with pytest.raises(NotFound):
        tools.get_memory(services, EVE, GetInput(reference=m.reference))


def test_not_found_is_the_same_for_foreign_and_missing(services):
    foreign = remember(services, EVE, content="eve only").memory.reference
    errors = []
    for ref in (foreign, "mem_01ZZZZZZZZZZZZZZZZZZZZZZZZ"):
        with pytest.raises(NotFound) as err:
            tools.get_memory(services, ALICE, GetInput(reference=ref))
        errors.append((err.value.code, err.value.message, err.value.details))
    assert errors[0] == errors[1]


def test_team_filter_narrows_and_foreign_team_is_403(services):
    remember(services, content="deploy notes private")
    t = remember(services, content="deploy notes team", team="acme").memory
    assert refs(tools.search_memory(services, ALICE, SearchInput(query="deploy notes", team="acme"))) == [t.reference]
    with pytest.raises(TeamMismatch):
        tools.recall(services, ALICE, RecallInput(query="deploy", team="evil"))


def test_project_bucket_type_tags_filters(services):
    a = remember(services, content="cache policy one", project="p1", bucket="ops", type="decision", tags=["infra", "cache"]).memory
    remember(services, content="cache policy two", project="p2", bucket="ops", type="decision", tags=["infra"])
    remember(services, content="cache policy three", project="p1", bucket="dev", type="fact", tags=["cache"])
    q = "cache policy"
    assert refs(tools.search_memory(services, ALICE, SearchInput(query=q, project="p1", bucket="ops"))) == [a.reference]
    assert refs(tools.recall(services, ALICE, RecallInput(query=q, tags=["infra", "cache"]))) == [a.reference]
    assert len(tools.search_memory(services, ALICE, SearchInput(query=q, type="decision")).results) == 2
    assert len(tools.recall(services, ALICE, RecallInput(query=q, bucket="ops")).results) == 2


def test_created_range_filter(services, clock):
    early = remember(services, content="budget review early").memory
    clock.advance(3600)
    late = remember(services, content="budget review late").memory
    hits = tools.search_memory(services, ALICE, SearchInput(query="budget review", created_after=late.created_at))
    assert refs(hits) == [late.reference]
    hits = tools.search_memory(services, ALICE, SearchInput(query="budget review", created_before=late.created_at))
    assert refs(hits) == [early.reference]


# --------------------------------------------------------------------------- temporary & expiry
def test_temporary_memories_need_flag_and_scope(services):
    t = tools.remember(services, ALICE, RememberInput(content="scratch: current branch is feat-x", temporary=True)).memory
    assert t.temporary and (t.expires_at - t.created_at).total_seconds() == 86_400
    assert tools.recall(services, TEMP, RecallInput(query="current branch")).results == []
    with pytest.raises(InsufficientScope):
        tools.recall(services, ALICE, RecallInput(query="current branch", include_temporary=True))
    assert refs(tools.recall(services, TEMP, RecallInput(query="current branch", include_temporary=True))) == [t.reference]


def test_expired_memories_never_come_back_and_are_purged(services, clock):
    t = tools.remember(services, ALICE, RememberInput(content="short lived note", temporary=True, ttl_seconds=60)).memory
    clock.advance(61)
    for inp in (RecallInput(query="short lived", include_temporary=True), SearchInput(query="short lived", include_temporary=True)):
        fn = tools.recall if isinstance(inp, RecallInput) else tools.search_memory
        assert fn(services, TEMP, inp).results == []
    with pytest.raises(NotFound):
        tools.get_memory(services, TEMP, GetInput(reference=t.reference))
    assert tools.purge_expired(services) == 1 and services.store.count() == 0


def test_expired_duplicate_is_replaced(services, clock):
    tools.remember(services, ALICE, RememberInput(content="same", temporary=True, ttl_seconds=60))
    clock.advance(120)
    again = tools.remember(services, ALICE, RememberInput(content="same", temporary=True, ttl_seconds=60))
    assert not again.duplicate and services.store.count() == 1


# --------------------------------------------------------------------------- recall & search
def test_recall_limit_and_no_match_text(services):
    for i in range(8):
        remember(services, content=f"incident {i} postmortem about the queue")
    assert len(tools.recall(services, ALICE, RecallInput(query="queue postmortem")).results) == 5
    assert len(tools.recall(services, ALICE, RecallInput(query="queue postmortem", limit=3)).results) == 3
    for fn, inp in [
        (tools.recall, RecallInput(query="zebra")),
        (tools.search_memory, SearchInput(query="zebra")),
        (tools.recall_context, ContextInput(query="zebra")),
    ]:
        assert render.text(fn(services, ALICE, inp)) == NO_MATCH == "No matching XMemo memory was found."


def test_recall_text_exact(services):
    m = remember(services, content="line one\nline two", type="decision", location="memory-os/decisions", team="acme", project="memory-os").memory
    text = render.text(tools.recall(services, ALICE, RecallInput(query="line")))
    assert text == (
        "### XMemo Recall\nResults: 1\n"
        f"1. Reference: {m.reference} | Type: decision | Location: memory-os/decisions | Boundary: team:acme/project:memory-os\n"
        "   line one\n   line two"
    )
    assert render.text(tools.search_memory(services, ALICE, SearchInput(query="line"))).startswith("### XMemo Search\nResults: 1\n1. ")


def test_search_is_strict_every_term_must_match(services):
    both = remember(services, content="rotate the signing keys quarterly").memory
    remember(services, content="rotate the database passwords")
    assert refs(tools.search_memory(services, ALICE, SearchInput(query="rotate signing"))) == [both.reference]
    assert tools.search_memory(services, ALICE, SearchInput(query="rotate signing monthly")).results == []
    # recall is tolerant: any term
    assert len(tools.recall(services, ALICE, RecallInput(query="rotate signing monthly")).results) == 2


def test_search_limit(services):
    for i in range(12):
        remember(services, content=f"alert rule {i} for latency")
    assert len(tools.search_memory(services, ALICE, SearchInput(query="alert latency")).results) == 10
    assert len(tools.search_memory(services, ALICE, SearchInput(query="alert latency", limit=12)).results) == 12


def test_lexical_is_accent_insensitive_and_finds_word_forms(services):
    fr = remember(services, content="La décision d'authentification est prise.").memory
    ko = remember(services, content="작업을 계속하는 방법을 기록한다").memory
    assert refs(tools.search_memory(services, ALICE, SearchInput(query="authentification"))) == [fr.reference]
    assert refs(tools.search_memory(services, ALICE, SearchInput(query="DECISION"))) == [fr.reference]
    assert refs(tools.search_memory(services, ALICE, SearchInput(query="작업"))) == [ko.reference]
    assert refs(tools.recall(services, ALICE, RecallInput(query="décisions"))) == [fr.reference]


def test_recency_breaks_ties(services, clock):
    old = remember(services, content="standup at nine").memory
    clock.advance(60)
    new = remember(services, content="standup at nine", bucket="b2").memory
    assert refs(tools.search_memory(services, ALICE, SearchInput(query="standup")))[0] == new.reference
    assert refs(tools.recall(services, ALICE, RecallInput(query="standup")))[0] == new.reference
    assert old.reference in refs(tools.recall(services, ALICE, RecallInput(query="standup")))


def test_reads_need_read_scope(services):
    writer = make_principal("alice", scopes=("memory:write",))
    for fn, inp in [
        (tools.recall, RecallInput(query="x")),
        (tools.search_memory, SearchInput(query="x")),
        (tools.recall_context, ContextInput(query="x")),
        (tools.list_memories, ListInput()),
        (tools.get_memory, GetInput(reference="mem_1")),
    ]:
        with pytest.raises(InsufficientScope):
            fn(services, writer, inp)


# --------------------------------------------------------------------------- recall_context
def seed_context(services, n=6):
    out = []
    for i in range(n):
        out.append(remember(services, content=f"memory-os decision {i}: " + "detail " * (10 + 5 * i), type="decision", location="memory-os/decisions").memory)
    return out


def test_context_text_exact_without_budget_line(services):
    ms = seed_context(services, 2)
    r = tools.recall_context(services, ALICE, ContextInput(query="memory-os decision"))
    lines = render.text(r).split("\n")
    assert lines[0] == "### XMemo Context" and lines[1] == "Items: 2"
    assert not any(l.startswith("Budget:") for l in lines)
    assert lines[2:4] == [f"Reference: {i.reference} | Type: decision | Location: memory-os/decisions" for i in r.items]
    assert lines[4] == "Context:"
    assert "\n".join(lines[5:]) == r.context_text
    assert r.context_text.startswith("[1] memory-os decision")
    assert {i.reference for i in r.items} == {m.reference for m in ms}


def test_context_budget_line_when_dropped_or_shortened(services):
    seed_context(services, 6)
    r = tools.recall_context(services, ALICE, ContextInput(query="memory-os decision", max_items=3, max_tokens=60))
    b = r.budget
    assert b.used_items <= 3 and b.used_tokens == count(r.context_text) <= 60
    assert b.dropped + b.used_items == 6
    assert f"Budget: used_items={b.used_items}/3 used_tokens={b.used_tokens}/60 dropped={b.dropped} shortened={b.shortened}" in render.text(r).split("\n")
    assert render.text(r).split("\n")[1] == f"Items: {b.used_items}"


def test_context_structured_pack(services):
    seed_context(services, 3)
    s = tools.recall_context(services, ALICE, ContextInput(query="memory-os decision", max_tokens=1000)).structured()
    assert s["version"] == "1" and s["query"] == "memory-os decision"
    assert set(s) == {"version", "query", "retrieval_plan", "budget", "items", "context_text"}
    assert set(s["budget"]) == {"max_items", "max_tokens", "used_items", "used_tokens", "dropped", "shortened", "encoding"}
    assert s["budget"]["encoding"] == "o200k_base"
    for item in s["items"]:
        # SPEC §5's item fields, plus its provenance (issue 16): who stored it, so an agent can weigh it
        assert set(item) == {"reference", "type", "location", "boundary", "score", "tokens", "shortened", "content", "created_at", "source"}
        assert set(item["source"]) == {"client_id", "agent", "session"}
    plan = s["retrieval_plan"]
    assert plan["lexical"]["candidates"] == 3 and plan["fusion"]["method"] == services.settings.fusion


def test_context_encoding_is_configuration(services):
    seed_context(services, 2)
    cl = type(services)(Settings(data_dir=services.settings.data_dir, embedder="none", encoding="cl100k_base"), services.store, None, services.clock)
    r = tools.recall_context(cl, ALICE, ContextInput(query="memory-os decision"))
    assert r.budget.encoding == "cl100k_base" and r.budget.used_tokens == count(r.context_text, "cl100k_base")


def test_context_changes_nothing(services):
    seed_context(services, 3)
    before = [m.model_dump() for m in tools.list_memories(services, ALICE, ListInput(limit=100)).memories]
    tools.recall_context(services, ALICE, ContextInput(query="memory-os decision"))
    after = [m.model_dump() for m in tools.list_memories(services, ALICE, ListInput(limit=100)).memories]
    assert before == after


def test_context_skips_near_duplicates(services):
    remember(services, content="the release train leaves every Tuesday at noon")
    remember(services, content="The release train leaves every Tuesday at noon!", bucket="other")
    r = tools.recall_context(services, ALICE, ContextInput(query="release train"))
    assert r.budget.used_items == 1 and r.budget.dropped == 1


def test_public_profile_input_works_with_the_tool(services):
    seed_context(services, 1)
    inp = parse_input(ContextPublic, {"query": "memory-os decision", "max_items": 6, "max_tokens": 1200})
    r = tools.recall_context(services, ALICE, ContextInput(**inp.model_dump()))
    assert r.budget.max_items == 6 and r.budget.max_tokens == 1200


# --------------------------------------------------------------------------- list, get, forget
def test_list_newest_first_with_cursor(services, clock):
    made = []
    for i in range(5):
        clock.advance(1)
        made.append(remember(services, content=f"note {i}").memory.reference)
    page1 = tools.list_memories(services, ALICE, ListInput(limit=2))
    page2 = tools.list_memories(services, ALICE, ListInput(limit=2, cursor=page1.next_cursor))
    page3 = tools.list_memories(services, ALICE, ListInput(limit=2, cursor=page2.next_cursor))
    got = [m.reference for p in (page1, page2, page3) for m in p.memories]
    assert got == list(reversed(made)) and page3.next_cursor is None


def test_forget_by_reference(services):
    m = remember(services, content="forget me").memory
    assert tools.forget(services, ALICE, ForgetInput(reference=m.reference)).deleted == 1
    with pytest.raises(NotFound):
        tools.forget(services, ALICE, ForgetInput(reference=m.reference))


def test_forget_never_reaches_beyond_visibility(services):
    theirs = remember(services, EVE, content="eve ops note", bucket="ops").memory
    remember(services, content="alice ops note", bucket="ops")
    remember(services, content="alice ops note two", bucket="ops")
    with pytest.raises(NotFound):
        tools.forget(services, ALICE, ForgetInput(reference=theirs.reference))
    assert tools.forget(services, ALICE, ForgetInput(bucket="ops")).deleted == 2
    assert tools.get_memory(services, EVE, GetInput(reference=theirs.reference))
    assert tools.forget(services, ALICE, ForgetInput(bucket="ops")).deleted == 0


def test_forget_by_filter_removes_superseded_copies_too(services):
    old = remember(services, content="v1 of the plan", bucket="plans").memory
    tools.remember(services, ALICE, RememberInput(content="v2 of the plan", bucket="plans", supersedes=old.reference))
    assert tools.forget(services, ALICE, ForgetInput(bucket="plans")).deleted == 2
    assert services.store.count() == 0


def test_forget_needs_write_scope(services):
    with pytest.raises(InsufficientScope):
        tools.forget(services, READER, ForgetInput(bucket="x"))
