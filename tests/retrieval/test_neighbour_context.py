"""Neighbouring context in the embedded store: a memory is also found by the words of the
memories written just before and after it in the same location (low weight, tolerant
leg only), and forgetting a memory takes its words out of its neighbours' context."""

import sqlite3

from tests.conftest import make_principal
from xmemo import tools
from xmemo.models import ForgetInput, RecallInput, RememberInput, SearchInput
from xmemo.services import Services
from xmemo.store.sqlite import SQLiteStore


def _say(services, principal, content, location="chat/session_1"):
    return tools.remember(services, principal, RememberInput(content=content, location=location)).memory.reference


def _recall(services, principal, query):
    return [h.reference for h in tools.recall(services, principal, RecallInput(query=query, limit=10)).results]


def test_a_reply_is_found_by_the_question_it_answers(services):
    p = make_principal()
    ask = _say(services, p, "Ann: Have you ever been to Lisbon?")
    reply = _say(services, p, "Bo: Yes, twice last year, with my sister.")
    elsewhere = _say(services, p, "Bo: Yes, twice a week.", location="chat/session_9")
    hits = _recall(services, p, "Lisbon")
    assert hits[0] == ask  # its own words weigh more than a neighbour's
    assert reply in hits
    assert elsewhere not in hits  # another location is no neighbour


def test_strict_search_ignores_context(services):
    p = make_principal()
    ask = _say(services, p, "Ann: Have you ever been to Lisbon?")
    _say(services, p, "Bo: Yes, twice last year.")
    hits = tools.search_memory(services, p, SearchInput(query="Lisbon")).results
    assert [h.reference for h in hits] == [ask]


def test_forgetting_a_memory_removes_its_words_from_its_neighbours(services):
    p = make_principal()
    before = _say(services, p, "Ann: I booked the ferry.")
    secret = _say(services, p, "Ann: The vault combination is tangerine.")
    after = _say(services, p, "Bo: Noted.")
    assert set(_recall(services, p, "tangerine")) == {before, secret, after}
    tools.forget(services, p, ForgetInput(reference=secret))
    assert _recall(services, p, "tangerine") == []
    # the survivors are now each other's neighbours
    assert _recall(services, p, "ferry") == [before, after]


def test_other_owners_memories_are_no_context(services):
    alice, bob = make_principal("alice"), make_principal("bob")
    _say(services, alice, "Alice: the launch code word is marmalade.")
    mine = _say(services, bob, "Bob: fine.")
    assert _recall(services, bob, "marmalade") == []
    assert mine in _recall(services, bob, "fine")


def test_temporary_neighbours_are_no_context_of_permanent_memories(services):
    """A temporary memory's words must not make a permanent neighbour findable by a caller
    without the temporary scope (and the other way round)."""
    p = make_principal()
    before = _say(services, p, "Ann: I booked the ferry.")
    tools.remember(services, p, RememberInput(content="Ann: scratch, the door code is pistachio.", location="chat/session_1", temporary=True))
    after = _say(services, p, "Bo: Noted.")
    assert _recall(services, p, "pistachio") == []
    assert set(_recall(services, p, "ferry")) == {before, after}  # they neighbour each other


def test_the_default_location_groups_nothing(services):
    """Without a named location (it defaults to the bucket) consecutive memories are
    unrelated notes, not a conversation: no context is shared."""
    p = make_principal()
    a = tools.remember(services, p, RememberInput(content="The ferry leaves at nine.")).memory.reference
    b = tools.remember(services, p, RememberInput(content="Budget review on Friday.")).memory.reference
    assert _recall(services, p, "ferry") == [a]
    assert _recall(services, p, "budget") == [b]


def test_a_schema_1_file_is_migrated(tmp_path, clock):
    from xmemo.config import Settings
    from xmemo.services import Services

    path = tmp_path / "old.sqlite3"
    settings = Settings(data_dir=tmp_path, embedder="none")
    p = make_principal()
    store = SQLiteStore(path)
    svc = Services(settings, store, None, clock)
    ask = _say(svc, p, "Ann: Have you ever been to Lisbon?")
    reply = _say(svc, p, "Bo: Yes, twice.")
    store.close()
    # put the FTS table back as schema 1 had it: no context column
    conn = sqlite3.connect(path)
    conn.executescript(
        "DROP TABLE memories_fts; CREATE VIRTUAL TABLE memories_fts USING fts5 (words, stems, "
        "tokenize = \"unicode61 remove_diacritics 2 tokenchars '_'\"); UPDATE meta SET value = 1 WHERE key = 'schema';"
    )
    conn.close()
    store = SQLiteStore(path)  # migrates: rebuilds the index from the memories
    try:
        svc = Services(settings, store, None, clock)
        assert set(_recall(svc, p, "Lisbon")) == {ask, reply}
        assert _recall(svc, p, "twice") == [reply, ask]  # own words first, then the neighbour
    finally:
        store.close()
    conn = sqlite3.connect(path)
    assert "context" in [r[1] for r in conn.execute("PRAGMA table_info(memories_fts)")]
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == 2
    conn.close()


def _grouped_replies(services, p):
    _say(services, p, "Ann: Which plants grow in your garden this spring?", location="chat/s1")
    _say(services, p, "Ann: Anyway, sure.", location="chat/s1")
    mine = _say(services, p, "Bo: Tomatoes, mostly.", location="chat/s1")
    _say(services, p, "Cy: Anyway, fine.", location="chat/s2")
    other = _say(services, p, "Di: Tomatoes, sadly.", location="chat/s2")
    return mine, other


def test_a_reply_in_the_conversation_of_the_best_hit_ranks_first(services):
    """Two replies that match the query alike (same words, same context length): the one whose
    conversation holds the best hit comes first (`retrieval.boost_groups`), although the other
    is newer and would win the tie alone."""
    p = make_principal()
    mine, other = _grouped_replies(services, p)
    hits = _recall(services, p, "garden plants tomatoes")
    assert hits.index(mine) < hits.index(other)


def test_without_the_group_weight_the_newer_reply_wins_the_tie(tmp_path, settings, clock):
    store = SQLiteStore(tmp_path / "alone.sqlite3")
    services = Services(settings.model_copy(update={"group_weight": 0.0}), store, None, clock)
    p = make_principal()
    mine, other = _grouped_replies(services, p)
    hits = _recall(services, p, "garden plants tomatoes")
    assert hits.index(other) < hits.index(mine)
    store.close()

