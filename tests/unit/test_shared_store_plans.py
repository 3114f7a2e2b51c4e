"""A tolerant search by one tenant of a store many tenants share (`xmemo.store.shares`): the
caller's share of the rows plans the search, and the plan never changes the answer.

A tenant owning 2.5 % of the rows used to pay an FTS5 ranking of every match three or four
times per search (2 k, then 16 k, then 128 k ranked, each checked against its filter). Now
one ranking query answers (the filtered join, or one right-sized round of the derived
index), with the same memories and scores as the exact filtered ranking."""

import random
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.auth import read_filter
from xmemo.ids import new_reference
from xmemo.models import Memory, boundary_of
from xmemo.store import sqlite as sqlite_store
from xmemo.store.shares import HolderShares, first_round
from xmemo.store.sqlite import SQLiteStore, fts_query, where_clause
from xmemo import text

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
WORDS = "kettle harbour zeppelin lantern meadow copper violin glacier orchard falcon".split()
QUERIES = ["kettle zeppelin", "harbour lantern meadow", "violins in the glacier", "copper orchard kettle harbour"]
TENANTS = 40


def _memory(i: int, owner: str, team: str | None = None) -> Memory:
    when = T0 + timedelta(seconds=i)
    pick = random.Random(i)  # words in uneven counts, so scores differ by IDF, term frequency and length
    content = f"note {i} " + " ".join(pick.choice(WORDS[: pick.randint(3, 10)]) for _ in range(pick.randint(1, 6)))
    return Memory(
        reference=new_reference(int(when.timestamp() * 1000)), type="note", content=content, location="b", bucket="b",
        owner=owner, team=team, boundary=boundary_of(owner, team, None), created_at=when, updated_at=when,
        content_sha256=tools.content_hash(content),
    )


@pytest.fixture
def path(tmp_path):
    """1,200 memories of 40 tenants, every tenth shared with team `blue`."""
    p = tmp_path / "shared.sqlite3"
    store = SQLiteStore(p)
    store.insert_many([_memory(i, f"tenant-{i % TENANTS}", "blue" if i % 10 == 0 else None) for i in range(TENANTS * 30)])
    store.close()
    return p


def _rf(owner: str, teams=()):
    return read_filter(make_principal(owner, teams=teams), T0 + timedelta(days=1))


def _exact(p, query: str, rf, k: int) -> list[tuple[str, float]]:
    """The k best matches the caller may see, by FTS5's bm25 over every visible match,
    equal scores newest first: the answer every plan must give."""
    conn = sqlite3.connect(p)
    where, params = where_clause(rf)
    rows = conn.execute(
        "SELECT m.reference, -bm25(memories_fts, 1.0, 1.0, 0.5) AS score FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
        f"WHERE memories_fts MATCH ? AND {where} ORDER BY score DESC, m.created_at DESC LIMIT ?",
        [fts_query(text.query_terms(query, strict=False), strict=False), *params, k],
    ).fetchall()
    conn.close()
    return rows


def _hits(store, query, rf, k):
    return [(h.memory.reference, h.score) for h in store.search(query, None, rf, lexical_k=k, semantic_k=0, strict=False).lexical]


def _same(got, want):
    assert [r for r, _ in got] == [r for r, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)


def _matches_counted(store) -> list[str]:
    """The full-text ranking statements the store's connection runs from now on."""
    seen: list[str] = []
    store._conn.set_trace_callback(lambda sql: seen.append(sql) if "MATCH" in sql else None)
    return seen


@pytest.mark.parametrize("indexed", [False, True], ids=["fts5", "derived index"])
@pytest.mark.parametrize("owner,teams", [("tenant-3", ()), ("tenant-7", ("blue",)), ("nobody", ())])
def test_a_narrow_callers_answer_is_the_exact_filtered_ranking(path, indexed, owner, teams):
    store = SQLiteStore(path, text_index_rows=50 if indexed else 0, lexical_budget=0)
    rf = _rf(owner, teams)
    for q in QUERIES:
        for k in (5, 60):
            want = _exact(path, q, rf, k)
            _same(_hits(store, q, rf, k), want)
            if owner != "nobody":
                assert want, q
    store.close()


def test_a_narrow_caller_pays_one_fts5_ranking(path):
    store = SQLiteStore(path, text_index_rows=0, lexical_budget=0)
    seen = _matches_counted(store)
    assert _hits(store, "kettle zeppelin", _rf("tenant-3"), 60)
    assert len(seen) == 1 and "JOIN memories" in seen[0]  # the filtered join at once, no widening rounds
    store.close()


def test_a_wide_caller_still_ranks_before_filtering(tmp_path):
    """One tenant who sees everything (the laptop's case): the full-text index ranks alone,
    once, as before."""
    p = tmp_path / "one.sqlite3"
    store = SQLiteStore(p, text_index_rows=0, lexical_budget=0)
    store.insert_many([_memory(i, "alice") for i in range(300)])
    seen = _matches_counted(store)
    _same(_hits(store, "kettle zeppelin", _rf("alice"), 60), _exact(p, "kettle zeppelin", _rf("alice"), 60))
    assert len(seen) == 1 and "JOIN" not in seen[0]
    store.close()


def test_a_narrow_caller_asks_the_derived_index_once(path, monkeypatch):
    store = SQLiteStore(path, text_index_rows=50, lexical_budget=0)
    asked: list[int] = []
    candidates = store._text.candidates
    monkeypatch.setattr(store._text, "candidates", lambda terms, limit, cw, *strict: asked.append(limit) or candidates(terms, limit, cw, *strict))
    rf = _rf("tenant-3")
    _same(_hits(store, "kettle zeppelin", rf, 5), _exact(path, "kettle zeppelin", rf, 5))
    assert asked == [first_round(5, 1 / TENANTS, sqlite_store.LEXICAL_POOL, sqlite_store.LEXICAL_WIDEST)]
    store.close()


def _share(shares, conn, holders):
    """As the store asks: with the largest rowid it read for the search."""
    return shares.share(conn, holders, conn.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0)


def test_shares_follow_the_store():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memories (rowid INTEGER PRIMARY KEY, holder TEXT)")
    shares = HolderShares()
    assert _share(shares, conn, {"a"}) == 1.0  # an empty store: nothing to plan around
    conn.executemany("INSERT INTO memories (holder) VALUES (?)", [("a",)] * 90 + [("b",)] * 10)
    assert _share(shares, conn, {"a"}) == pytest.approx(0.9)
    assert _share(shares, conn, {"a", "b"}) == 1.0
    assert _share(shares, conn, {"c"}) == 0.0
    conn.executemany("INSERT INTO memories (holder) VALUES (?)", [("c",)] * 5)  # within the drift: counts kept
    assert _share(shares, conn, {"c"}) == 0.0
    conn.executemany("INSERT INTO memories (holder) VALUES (?)", [("c",)] * 95)  # past it: reread
    assert _share(shares, conn, {"c"}) == pytest.approx(0.5)


def test_a_store_with_one_holder_is_not_counted():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memories (rowid INTEGER PRIMARY KEY, holder TEXT)")
    conn.execute("CREATE INDEX memories_holder ON memories (holder)")
    conn.executemany("INSERT INTO memories (holder) VALUES (?)", [("a",)] * 500)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    shares = HolderShares()
    assert _share(shares, conn, {"a"}) == 1.0 and _share(shares, conn, {"b"}) == 0.0
    assert not any("GROUP BY" in s for s in statements)  # two index seeks, no pass over the rows
    conn.execute("INSERT INTO memories (holder) VALUES ('b')")
    conn.executemany("INSERT INTO memories (holder) VALUES (?)", [("a",)] * 100)  # past the drift
    assert _share(shares, conn, {"b"}) == pytest.approx(1 / 601)


def test_first_round_is_sized_by_the_share():
    assert first_round(60, 1.0, 2, 8000) == 120
    assert first_round(60, 0.03, 2, 8000) == 4000
    assert first_round(60, 0.001, 2, 8000) == 8000
    assert first_round(60, 0.0, 2, 8000) == 8000
