"""Neighbouring context on the OpenSearch store (issue 13), on osmem-server: the embedded
store's own behaviour tests run here unchanged, the stored contexts equal the embedded
store's after the same writes, imports and deletes, and a migration from an index without
the field fills every context in."""

from __future__ import annotations

import io

import pytest
from opensearchpy import OpenSearch

from tests.conftest import make_principal
from tests.retrieval import test_neighbour_context as embedded
from xmemo import text, tools
from xmemo.config import Settings
from xmemo.models import ForgetInput, RememberInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore
from xmemo.store.opensearch.index import index_body
from xmemo.store.opensearch.manage import IndexPlan, migrate
from xmemo.store.sqlite import SQLiteStore
from xmemo.transfer import export_memories, import_memories

pytestmark = pytest.mark.integration


def os_services(url: str, clock) -> Services:
    settings = Settings(store="opensearch", opensearch_url=url, opensearch_knn=False, embedder="none")
    return Services(settings, OpenSearchStore.from_settings(settings), None, clock)


@pytest.mark.parametrize(
    "case",
    [
        embedded.test_a_reply_is_found_by_the_question_it_answers,
        embedded.test_strict_search_ignores_context,
        embedded.test_forgetting_a_memory_removes_its_words_from_its_neighbours,
        embedded.test_other_owners_memories_are_no_context,
        embedded.test_temporary_neighbours_are_no_context_of_permanent_memories,
        embedded.test_the_default_location_groups_nothing,
    ],
    ids=lambda case: case.__name__.removeprefix("test_"),
)
def test_the_embedded_stores_context_behaviour_holds_on_opensearch(case, osmem_clone, clock):
    case(os_services(osmem_clone.url, clock))


def test_forgetting_the_only_memory_of_a_location_leaves_nothing_to_update(osmem_clone, clock):
    svc = os_services(osmem_clone.url, clock)
    p = make_principal()
    alone = embedded._say(svc, p, "Ann: a session of one line", location="chat/alone")
    assert tools.forget(svc, p, ForgetInput(reference=alone)).deleted == 1
    assert embedded._recall(svc, p, "session") == []


def raw_contexts(svc: Services) -> dict[str, str]:
    """reference → the `context` field as stored (read with a bare search, not the store's code)."""
    store = svc.store
    store.client.indices.refresh(index=store.alias)
    hits = store.client.search(index=store.alias, body={"size": 1000, "query": {"match_all": {}}})["hits"]["hits"]
    return {h["_source"]["reference"]: h["_source"].get("context", "") for h in hits}


def sqlite_contexts(store: SQLiteStore) -> dict[str, str]:
    rows = store._conn.execute("SELECT m.reference, f.context FROM memories m JOIN memories_fts f ON f.rowid = m.rowid")
    return {reference: context for reference, context in rows}


def test_stored_contexts_equal_the_embedded_stores_after_writes_imports_and_deletes(osmem_clone, clock, tmp_path):
    """The same history on both stores (two speakers, two sessions, a temporary aside, a
    note in the default location, a forget in the middle, a forget by filter, then the
    whole thing imported for a second owner through `_bulk`) leaves every memory with the
    same neighbours: the OpenSearch context is the SQLite context column, term for term,
    and the ranked terms are the memory's own terms twice and that context once."""
    lite_settings = Settings(data_dir=tmp_path, embedder="none")
    lite_store = SQLiteStore(tmp_path / "x.sqlite3")
    stores = {"sqlite": Services(lite_settings, lite_store, None, clock), "opensearch": os_services(osmem_clone.url, clock)}
    ann, bo = make_principal("ann"), make_principal("bo", teams=("crew",))
    script = [
        (ann, "Ann: Have you ever been to Lisbon?", "chat/1", False),
        (ann, "Bo: Yes, twice last year, with my sister.", "chat/1", False),
        (ann, "Ann: scratch, the door code is pistachio.", "chat/1", True),
        (ann, "Ann: Which month was that?", "chat/1", False),
        (ann, "Bo: May, for the jacaranda bloom.", "chat/1", False),
        (ann, "Ann: The budget review is on Friday.", None, False),
        (ann, "Ann: Another session starts here.", "chat/2", False),
        (bo, "Bo: crew notes about the ferry timetable.", "chat/1", False),
        (ann, "Ann: And the trams were yellow.", "chat/1", False),
    ]
    refs: dict[str, list[str]] = {name: [] for name in stores}
    for name, svc in stores.items():
        for who, content, location, temporary in script:
            inp = RememberInput(content=content, location=location, temporary=temporary, team="crew" if who is bo else None)
            refs[name].append(tools.remember(svc, who, inp).memory.reference)
    for name, svc in stores.items():
        tools.forget(svc, ann, ForgetInput(reference=refs[name][3]))  # "Which month was that?"
        exported = io.StringIO()
        export_memories(svc, ann, exported)
        lines = [
            line.replace('"owner:ann', '"owner:cy').replace('"ann"', '"cy"').replace('"mem_0', '"mem_1')  # new owner, new references
            for line in exported.getvalue().splitlines()
        ]
        assert import_memories(svc, lines).stored >= 5

    def by_content(name: str, contexts: dict[str, str], svc: Services) -> dict[tuple[str, str], list[str]]:
        out = {}
        for ref, ctx in contexts.items():
            memory = svc.store.get(ref, _everything(svc, ref))
            out[(memory.owner, memory.content)] = sorted(ctx.split())
        return out

    lite = by_content("sqlite", sqlite_contexts(lite_store), stores["sqlite"])
    hosted = by_content("opensearch", raw_contexts(stores["opensearch"]), stores["opensearch"])
    assert hosted == lite
    yes = ("ann", "Bo: Yes, twice last year, with my sister.")
    assert "lisbon" in hosted[yes] and "jacaranda" in hosted[yes]  # its neighbours since the forget
    assert "pistachio" not in hosted[yes] and "month" not in hosted[yes]
    assert hosted[("cy", yes[1])] == hosted[yes]  # imported in one `_bulk`, same neighbours
    rows = {ref: (stems, ctx) for ref, stems, ctx in lite_store._conn.execute(
        "SELECT m.reference, f.stems, f.context FROM memories m JOIN memories_fts f ON f.rowid = m.rowid")}
    lite_rows = {(m.owner, m.content): rows[m.reference] for m in _all(stores["sqlite"])}
    for memory in _all(stores["opensearch"]):
        stems, ctx = lite_rows[(memory.owner, memory.content)]
        assert raw_terms(stores["opensearch"])[memory.reference].split() == f"{stems} {stems} {ctx}".split()
    lite_store.close()


def raw_terms(svc: Services) -> dict[str, str]:
    """reference → the ranked `terms` field as stored."""
    hits = svc.store.client.search(index=svc.store.alias, body={"size": 1000, "query": {"match_all": {}}})["hits"]["hits"]
    return {h["_source"]["reference"]: h["_source"]["terms"] for h in hits}


def _all(svc: Services):
    from xmemo.auth import ReadFilter

    rf = ReadFilter(holders=frozenset({"owner:ann", "owner:cy", "team:crew"}), now=svc.clock(), include_temporary=True)
    return svc.store.list(rf, 100, None)[0]


def _everything(svc: Services, reference: str):
    """A read filter that sees every holder of the test (the memory's own), temporary ones too."""
    from xmemo.auth import ReadFilter

    return ReadFilter(holders=frozenset({"owner:ann", "owner:cy", "team:crew"}), now=svc.clock(), include_temporary=True)


def _older_index(url: str, clock, caplog, version: int, without: str, warning: str):
    """An index of mapping `version` (the current body less the field it lacked) behind the
    alias; two turns written and "Lisbon" recalled through it, which finds only the turn
    that says it (no neighbour's words) and warns once. (client, services, principal, ask, reply)."""
    client = OpenSearch(hosts=[url])
    old = index_body(None)
    del old["mappings"]["properties"][without]
    old["mappings"]["_meta"] = {"xmemo_mapping_version": version}
    client.indices.create(index=f"xmemo-memories-v{version}", body={**old, "aliases": {"xmemo-memories": {}}})
    svc = os_services(url, clock)
    p = make_principal()
    with caplog.at_level("WARNING", logger="xmemo.store.opensearch"):
        ask = embedded._say(svc, p, "Ann: Have you ever been to Lisbon?")
        reply = embedded._say(svc, p, "Bo: Yes, twice last year.")
        assert embedded._recall(svc, p, "Lisbon") == [ask]
    assert sum(warning in r.getMessage() for r in caplog.records) == 1
    return client, svc, p, ask, reply


def test_a_v1_index_runs_without_context_until_migrate_fills_it_in(osmem_clone, clock, caplog):
    client, svc, p, ask, reply = _older_index(osmem_clone.url, clock, caplog, 1, "context", "no neighbouring-context field")
    moved = migrate(client, IndexPlan("xmemo-memories", None, replicas=0))
    assert (moved["from"], moved["to"], moved["copied"], moved["contexts"]) == ("xmemo-memories-v1", "xmemo-memories-v7", 2, 2)
    svc = os_services(osmem_clone.url, clock)  # a new process: the new index has the field
    assert embedded._recall(svc, p, "Lisbon") == [ask, reply]
    stems = lambda content: " ".join(text.stems(content))  # noqa: E731
    assert raw_contexts(svc) == {ask: stems("Bo: Yes, twice last year."), reply: stems("Ann: Have you ever been to Lisbon?")}
    own = stems("chat/session_1\nAnn: Have you ever been to Lisbon?").split()  # location and content, as `search_text`
    assert raw_terms(svc)[ask].split() == own + own + stems("Bo: Yes, twice last year.").split()


def test_a_v2_index_runs_with_its_older_query_until_migrate_ranks_it_as_sqlite(osmem_clone, clock, caplog):
    """An index without the ranked `terms` (mapping v2) takes writes (no field it would
    refuse), answers the tolerant leg with its older query and no context, warns once;
    `migrate` moves it to the current version (v7) and computes every document's terms."""
    client, svc, p, ask, reply = _older_index(osmem_clone.url, clock, caplog, 2, "terms", "no analysed-terms field (mapping v2)")
    stored = client.search(index="xmemo-memories", body={"query": {"term": {"reference": ask}}})["hits"]["hits"][0]["_source"]
    assert "terms" not in stored
    moved = migrate(client, IndexPlan("xmemo-memories", None, replicas=0))
    assert (moved["from"], moved["to"], moved["copied"], moved["contexts"]) == ("xmemo-memories-v2", "xmemo-memories-v7", 2, 2)
    svc = os_services(osmem_clone.url, clock)
    assert embedded._recall(svc, p, "Lisbon") == [ask, reply]  # the reply through its neighbour's terms
    assert all(raw_terms(svc).values())
