"""The lexical legs (tolerant and strict) of a large embedded store through its derived
tantivy index (`xmemo.store.textindex`): the same hits and scores as FTS5's bm25, every acknowledged
write found at once, exact visibility, and recovery from a lagging, missing or broken
index and from a kill mid-write."""

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import make_principal
from tests.crashes import kill_after_acknowledged
from xmemo import tools
from xmemo.auth import read_filter
from xmemo.ids import new_reference
from xmemo.models import Memory, boundary_of
from xmemo.store import textindex
from xmemo.store.sqlite import SQLiteStore

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
WORDS = "kettle harbour zeppelin lantern meadow copper violin glacier orchard falcon".split()
QUERIES = ["kettle zeppelin", "harbour lantern meadow", "violins in the glacier", "falcon", "copper orchard kettle harbour"]


def _memory(i: int, content: str, owner: str = "alice", location: str = "b") -> Memory:
    when = T0 + timedelta(seconds=i)
    return Memory(
        reference=new_reference(int(when.timestamp() * 1000)), type="note", content=content, location=location, bucket="b",
        owner=owner, boundary=boundary_of(owner, None, None), created_at=when, updated_at=when,
        content_sha256=tools.content_hash(content),
    )


def _content(i: int) -> str:
    """Words in uneven frequencies and counts, so scores differ by IDF, term frequency
    and length."""
    picked = [WORDS[(i * j + j) % len(WORDS)] for j in range(1, 2 + i % 5)]
    return f"note {i} " + " ".join(picked) + (" kettle kettle" if i % 11 == 0 else "")


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "x.sqlite3"
    store = SQLiteStore(p)
    store.insert_many([_memory(i, _content(i)) for i in range(400)])
    # memories in one named location: each one's neighbours' words are its context
    store.insert_many([_memory(1000 + i, f"chat {WORDS[i % 10]} turn {i}", location="chat-1") for i in range(30)])
    store.close()
    return p


def _rf(owner="alice"):
    return read_filter(make_principal(owner), T0 + timedelta(days=1))


def _indexed(p, **kw):
    return SQLiteStore(p, text_index_rows=50, **kw)  # the fixture's stores are past it


def _fts5(p):
    return SQLiteStore(p, text_index_rows=0, lexical_budget=0)


def _hits(store, query, k=500, owner="alice"):
    return [(h.memory.reference, h.score) for h in store.search(query, None, _rf(owner), lexical_k=k, semantic_k=0, strict=False).lexical]


def _same(got, want):
    assert [r for r, _ in got] == [r for r, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)


def test_the_index_ranks_and_scores_as_fts5(path):
    indexed, fts5 = _indexed(path), _fts5(path)
    for q in QUERIES + ["chat turn", "meadow"]:
        want = _hits(fts5, q)
        assert want, q
        _same(_hits(indexed, q), want)  # every match (k covers them): identical lists
        top = _hits(indexed, q, k=20)  # the top 20 from 40 candidates
        assert len(top) == min(20, len(want)) and len({r for r, _ in top} & {r for r, _ in want[:20]}) >= len(top) - 2
    assert (path.parent / "x.sqlite3.text" / "watermark.json").exists()
    indexed.close(), fts5.close()


def test_small_stores_stay_on_fts5(path):
    store = SQLiteStore(path, text_index_rows=10_000)  # more rows than the store has
    _same(_hits(store, "kettle zeppelin"), _hits(_fts5(path), "kettle zeppelin"))
    _same(_strict(store, "kettle zeppelin"), _strict(_fts5(path), "kettle zeppelin"))
    assert not (path.parent / "x.sqlite3.text").exists()
    store.close()


def _strict(store, query, k=500, owner="alice"):
    return [(h.memory.reference, h.score) for h in store.search(query, None, _rf(owner), lexical_k=k, semantic_k=0, strict=True).lexical]


def test_strict_search_asks_the_index_and_ranks_and_scores_as_fts5(path, monkeypatch):
    """`search_memory`'s leg (every term, in the memory's own words, never its context)
    through the index: FTS5's hits, order and scores, for every match and for a top k,
    with writes not yet in the index; FTS5 itself is not asked."""
    indexed, fts5 = _indexed(path), _fts5(path)
    indexed.insert(_memory(5000, "a kettle and a zeppelin by the copper orchard"))  # lagging: scored from SQLite
    indexed.insert(_memory(1200, "chat meadow", location="chat-1"))
    wanted = {q: (_strict(fts5, q), _strict(fts5, q, k=5)) for q in [*QUERIES, "chat turn", "meadow", "kettle kettle", "quokka"]}
    monkeypatch.setattr(SQLiteStore, "_lexical", lambda *a, **k: pytest.fail("FTS5 ranked a strict query of a large store"))
    for q, (every, top) in wanted.items():
        _same(_strict(indexed, q), every)
        _same(_strict(indexed, q, k=5), top)
    assert wanted["kettle zeppelin"][0] and not wanted["quokka"][0]
    assert all("meadow" in content for content in [indexed.get(r, _rf()).content for r, _ in wanted["meadow"][0]])  # words, not context
    indexed.close(), fts5.close()


def test_writes_are_found_before_the_index_catches_up(path):
    store = _indexed(path)
    _hits(store, "kettle")  # builds the index
    mark = store._text.watermark
    store.insert(_memory(5000, "a quokka by the kettle"))
    assert _hits(store, "quokka")[0][0] == _hits(_fts5(path), "quokka")[0][0]
    gone = _hits(store, "zeppelin")[0][0]
    store.delete(_rf(), gone)
    assert gone not in {r for r, _ in _hits(store, "zeppelin")}
    store.insert(_memory(1100, "chat about an ocelot", location="chat-1"))  # its neighbour's context changes
    for q in ("kettle zeppelin quokka", "ocelot", "chat turn"):
        _same(_hits(store, q), _hits(_fts5(path), q))
    assert store._text.watermark == mark, "fewer than LAG changes: scored from SQLite, no commit"
    store.close()


def test_the_index_catches_up_every_lag_changes(path, monkeypatch):
    monkeypatch.setattr(textindex, "LAG", 20)
    store = _indexed(path)
    _hits(store, "kettle")
    mark = store._text.watermark
    for i in range(25):
        store.insert(_memory(6000 + i, f"walrus {i} " + _content(i)))
    _same(_hits(store, "walrus kettle"), _hits(_fts5(path), "walrus kettle"))
    store._text.wait()  # the catch-up that search started in the background
    stored = json.loads((path.parent / "x.sqlite3.text" / "watermark.json").read_text())["seq"]
    assert store._text.watermark == stored > mark
    last = store._conn.execute("SELECT max(seq) FROM text_changes").fetchone()[0]
    assert stored == last
    # the change log is trimmed behind the watermark
    for i in range(300):
        store.insert(_memory(7000 + i, f"narwhal {i}"))
        _hits(store, "narwhal")
    store._text.wait()
    store.insert(_memory(8000, "narwhal last"))  # trims behind the last commit
    kept = store._conn.execute("SELECT count(*) FROM text_changes").fetchone()[0]
    assert kept <= 8 * textindex.LAG + textindex.LAG + 1
    store.close()


def test_visibility_is_exact(path):
    store = SQLiteStore(path)
    store.insert_many([_memory(8000 + i, f"kettle zeppelin {i} of bob's", owner="bob") for i in range(200)])
    store.insert_many([_memory(9000 + i, f"kettle marmot {i} of carol's", owner="carol") for i in range(3)])
    store.close()
    indexed = _indexed(path)
    for owner in ("alice", "bob", "carol"):
        got = indexed.search("kettle zeppelin marmot", None, _rf(owner), lexical_k=60, semantic_k=0, strict=False).lexical
        assert got and {h.memory.owner for h in got} == {owner}
        _same([(h.memory.reference, h.score) for h in got], _hits(_fts5(path), "kettle zeppelin marmot", k=60, owner=owner))
        strict = _strict(indexed, "kettle zeppelin", k=60, owner=owner)  # the strict leg reads rows through the same filter
        assert {indexed.get(r, _rf(owner)).owner for r, _ in strict} == ({owner} if owner != "carol" else set())
        _same(strict, _strict(_fts5(path), "kettle zeppelin", k=60, owner=owner))
    indexed.close()


def _damage(path, damage):
    folder = path.parent / "x.sqlite3.text"
    if damage == "behind":  # a crash between tantivy's commit and the watermark's write, or an old copy
        (folder / "watermark.json").write_text(json.dumps({"seq": 0, "format": textindex.FORMAT}))
    elif damage == "no watermark":
        (folder / "watermark.json").unlink()
    elif damage == "old format":
        (folder / "watermark.json").write_text(json.dumps({"seq": 10**9, "format": textindex.FORMAT - 1}))
    elif damage == "broken":
        (folder / "meta.json").write_text("{not json")
    else:
        shutil.rmtree(folder)


@pytest.mark.parametrize("damage", ["behind", "no watermark", "old format", "broken", "gone"])
def test_a_lagging_missing_or_broken_index_is_recovered(path, damage):
    store = _indexed(path)
    _hits(store, "kettle")
    store.insert_many([_memory(5000 + i, f"ibex {i} kettle") for i in range(5)])
    store.delete(_rf(), _hits(store, "zeppelin")[0][0])
    store.close()
    _damage(path, damage)
    store = _indexed(path)
    for q in QUERIES + ["ibex", "chat turn"]:
        _same(_hits(store, q), _hits(_fts5(path), q))
    store.close()


WRITER = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timezone
    from pathlib import Path
    from xmemo import tools
    from xmemo.auth import principal_from_claims, read_filter
    from xmemo.config import Settings
    from xmemo.models import RememberInput
    from xmemo.services import Services
    from xmemo.store import textindex
    from xmemo.store.sqlite import SQLiteStore

    textindex.LAG = 7  # commit (and write the watermark) often, so the kill lands in one
    path = Path(sys.argv[1])
    store = SQLiteStore(path, text_index_rows=20)
    svc = Services(Settings(data_dir=path.parent, embedder="none"), store, None)
    p = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:read xmemo/memory:write"})
    for i in range(100000):
        r = tools.remember(svc, p, RememberInput(content=f"crash memory w{i}x and more words " + "pad " * (i % 9)))
        print(i, r.memory.reference, flush=True)  # acknowledged
        store.search(f"w{i}x pad", None, read_filter(p, datetime.now(timezone.utc)), lexical_k=5, semantic_k=0, strict=False)
    """
)


def test_sigkill_mid_writes_and_commits_loses_no_acknowledged_write(tmp_path):
    path = tmp_path / "x.sqlite3"
    acked = [(int(i), reference) for i, reference in kill_after_acknowledged(WRITER, path, 120)]
    assert len(acked) >= 120, "the writer did not get going"
    assert json.loads((tmp_path / "x.sqlite3.text" / "watermark.json").read_text())["seq"] > 0, "the index committed"
    store = SQLiteStore(path, text_index_rows=20)
    rf = read_filter(make_principal("alice"), datetime.now(timezone.utc))
    for i, reference in acked:
        got = store.search(f"w{i}x", None, rf, lexical_k=5, semantic_k=0, strict=False).lexical
        assert [h.memory.reference for h in got] == [reference]
    got = {h.memory.reference for h in store.search("crash pad", None, rf, lexical_k=1000, semantic_k=0, strict=False).lexical}
    rows = {r[0] for r in sqlite3.connect(path).execute("SELECT reference FROM memories")}
    assert {r for _, r in acked} <= got == rows
    store.close()


def test_rows_written_without_the_change_log_are_found(path):
    """An older version of the store (or `bench latency --copies`) adds rows and never logs
    them: the rows past the index's last row are scored from SQLite, then indexed."""
    store = _indexed(path)
    _hits(store, "kettle")
    store.close()
    old = _fts5(path)
    old.insert(_memory(5000, "a quokka by the kettle"))
    old._conn.execute("DELETE FROM text_changes")  # as if no log had been kept
    old.close()
    store = _indexed(path)
    _same(_hits(store, "quokka kettle"), _hits(_fts5(path), "quokka kettle"))
    store._text._catch_up(store._conn, store._conn.execute("SELECT coalesce(max(seq), 0) FROM text_changes").fetchone()[0])
    assert store._text._changed(store._conn, store._text.watermark, store._text.max_rowid) == []
    _same(_hits(store, "quokka kettle"), _hits(_fts5(path), "quokka kettle"))
    store.close()


def test_without_tantivy_the_store_answers_from_fts5(path, monkeypatch):
    """A runtime without the `local` extra (no tantivy) keeps the FTS5 leg."""
    monkeypatch.setitem(sys.modules, "tantivy", None)  # `import tantivy` raises ImportError
    store = _indexed(path)
    for q in QUERIES:
        _same(_hits(store, q), _hits(SQLiteStore(path, text_index_rows=0), q))
    assert store._text._missing and not (path.parent / "x.sqlite3.text").exists()
    store.close()


def test_an_index_that_cannot_catch_up_hands_over_to_fts5(path, monkeypatch):
    """Its writer held elsewhere and the lag past `LEXICAL_WIDEST` rows: FTS5 answers,
    and every write is still found."""
    from xmemo.store import sqlite as sqlite_store

    store = _indexed(path)
    _hits(store, "kettle")
    monkeypatch.setattr(textindex, "LAG", 10)
    monkeypatch.setattr(sqlite_store, "LEXICAL_WIDEST", 30)
    monkeypatch.setattr(textindex.TextIndex, "_writer", lambda self: None)
    mark = store._text.watermark
    for i in range(40):
        store.insert(_memory(5000 + i, f"okapi {i} kettle"))
    _same(_hits(store, "okapi kettle"), _hits(_fts5(path), "okapi kettle"))
    assert store._text.watermark == mark and len(store._text.lagging(store._conn)) > 30
    store.close()


TWIN = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timezone
    from pathlib import Path
    from xmemo.auth import principal_from_claims, read_filter
    from xmemo.models import Memory, boundary_of
    from xmemo.ids import new_reference
    from xmemo import tools
    from xmemo.store import textindex
    from xmemo.store.sqlite import SQLiteStore

    textindex.LAG = 5  # both processes catch the shared index up, often
    path, name = Path(sys.argv[1]), sys.argv[2]
    store = SQLiteStore(path, text_index_rows=20)
    p = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:read xmemo/memory:write"})
    for i in range(40):
        now = datetime.now(timezone.utc)
        content = f"twin {name}{i}q wrote this"
        m = Memory(reference=new_reference(), type="note", content=content, location="b", bucket="b", owner="alice",
                   boundary=boundary_of("alice", None, None), created_at=now, updated_at=now,
                   content_sha256=tools.content_hash(content))
        store.insert(m)
        for j in range(i + 1):  # every write so far of this process, through the shared index
            got = store.search(f"{name}{j}q", None, read_filter(p, now), lexical_k=3, semantic_k=0, strict=False).lexical
            assert [h.memory.content for h in got] == [f"twin {name}{j}q wrote this"], (name, j, got)
    print("ok", store._text.watermark)
    """
)


def test_two_processes_share_the_index_and_find_every_write(path):
    procs = [subprocess.Popen([sys.executable, "-c", TWIN, str(path), n], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in ("a", "b")]
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0 and out.startswith("ok"), err[-2000:]
    store = _indexed(path)
    for q in ("twin wrote", "a39q", "b0q"):
        _same(_hits(store, q), _hits(_fts5(path), q))
    store.close()


def test_strict_search_keeps_fts5s_newest_first_among_equal_scores(path, monkeypatch):
    """Many memories scoring the same (one text, each alone in its location), written in
    batches the index commits one after another, so they lie in several segments: the
    strict leg returns FTS5's list, the newest first, not the ties tantivy happened to keep."""
    def same(i: int) -> Memory:
        return _memory(2000 + i, "the zeppelin kettle ledger", location=f"l{i}").model_copy(update={"bucket": f"b{i}"})

    indexed, fts5 = _indexed(path), _fts5(path)
    candidates = textindex.TextIndex.candidates
    indexed.insert_many([_memory(4000 + i, f"filler {i}", location=f"f{i}") for i in range(600)])
    for batch in range(2):
        indexed.insert_many([same(i) for i in range(batch * 260, (batch + 1) * 260)])
        _strict(indexed, "zeppelin ledger")  # past LAG changes: the index commits them
        indexed._text.wait()
    searches = []
    monkeypatch.setattr(textindex.TextIndex, "candidates", lambda self, *a, **kw: searches.append(a[1]) or candidates(self, *a, **kw))
    for k, asked in ((5, [320, 2560]), (20, [1280])):
        want = _strict(fts5, "zeppelin ledger", k=k)
        assert len({s for _, s in want}) == 1 and want[0][1] > 0.01  # all tied, and the words are rare enough to weigh
        searches.clear()
        _same(_strict(indexed, "zeppelin ledger", k=k), want)
        # the widening round's candidates come with the first round's (8 × k, then 8 × that): one
        # search fewer; a conjunction costs the index the same whatever the limit
        assert searches == asked
    indexed.close(), fts5.close()


def test_a_tied_strict_search_reads_no_more_rows_than_the_tie_needs(path, monkeypatch):
    """Tantivy lists eight times the first round at once (a conjunction costs it the same
    whatever the limit), but each row read and scored costs: when the first round ties
    whole, the leg widens twofold within that list and stops at the first round that no
    longer ties, with FTS5's list (the newest of the tie first)."""
    indexed, fts5 = _indexed(path), _fts5(path)

    def copy(i: int) -> Memory:  # one text in 60 buckets (a bucket keeps one copy of a note); notes have no context
        return _memory(3000 + i, "zeppelin ledger", location="desk").model_copy(update={"bucket": f"b{i}"})

    indexed.insert_many([copy(i) for i in range(60)])
    indexed.insert_many([_memory(3200 + i, f"zeppelin ledger with a much longer line of words {i}", location="desk") for i in range(300)])
    read: list[int] = []
    original = textindex.Statistics.visible_scores
    monkeypatch.setattr(textindex.Statistics, "visible_scores", lambda self, conn, rowids, *a: read.append(len(rowids)) or original(self, conn, rowids, *a))
    scored: list[str] = []
    score = textindex.Statistics._strict_score
    monkeypatch.setattr(textindex.Statistics, "_strict_score", lambda self, texts, *a: scored.append(texts[0]) or score(self, texts, *a))
    want = _strict(fts5, "zeppelin ledger", k=5)
    assert len({s for _, s in want}) == 1
    _same(_strict(indexed, "zeppelin ledger", k=5), want)
    assert read == [40, 40]  # 8 × k tied whole; 80 do not (the 60 copies, then longer lines), not the 320 listed
    assert scored.count("desk zeppelin ledger") == 1  # the copies' text once, in the first round, not again in the second
    indexed.close(), fts5.close()


def test_rows_alike_in_text_and_length_are_scored_once(path, monkeypatch):
    """A widening strict search reads hundreds of tied rows, mostly copies of one text:
    each distinct (text, length) is scored once, and every copy still gets FTS5's score."""
    indexed, fts5 = _indexed(path), _fts5(path)
    indexed.insert_many([_memory(3000 + i, "the zeppelin kettle ledger", location=f"c{i}") for i in range(120)])
    indexed.insert_many([_memory(3200 + i, "a zeppelin ledger entry", location=f"d{i}") for i in range(40)])
    calls = []
    for name in ("_strict_score", "_any_term_score"):
        original = getattr(textindex.Statistics, name)
        monkeypatch.setattr(textindex.Statistics, name, lambda self, *a, _o=original: calls.append(a[0]) or _o(self, *a))
    _same(_strict(indexed, "zeppelin ledger"), _strict(fts5, "zeppelin ledger"))
    assert len(calls) == len(set(calls)) == 2
    calls.clear()
    _same(_hits(indexed, "zeppelin ledger"), _hits(fts5, "zeppelin ledger"))
    assert len(calls) == len(set(calls)) and len(calls) < 120
    indexed.close(), fts5.close()


def test_a_rows_length_reads_one_byte_and_longer_varints_alike():
    """`_length` (every column's tokens, from FTS5's docsize record) skips varint decoding
    when every byte is a whole varint, and gives what decoding gives."""
    import random

    def varint(n: int) -> bytes:
        out = [n & 0x7F]
        while n > 0x7F:
            n >>= 7
            out.append(0x80 | (n & 0x7F))
        return bytes(reversed(out))

    rng = random.Random(5)
    for _ in range(500):
        sizes = [rng.choice([rng.randrange(128), rng.randrange(128, 70_000)]) for _ in range(3)]
        blob = b"".join(varint(n) for n in sizes)
        assert textindex._varints(blob) == sizes and textindex._length(blob) == sum(sizes)
    assert textindex._length(b"") == 0


def test_the_lagging_rows_are_read_once_while_they_stay_the_same(path, monkeypatch):
    """Writes not yet in the index shift each term's count: what they hold is read once
    per state of the lag (the searcher and the last change), not on every search; a new
    change (here a forget) is read again, and the scores stay FTS5's throughout."""
    indexed, fts5 = _indexed(path), _fts5(path)
    _strict(indexed, "kettle")  # the index built: what is written next lags it
    written = [indexed.insert(_memory(6000 + i, f"kettle zeppelin lag {i}"))[0] for i in range(5)]
    reads = []
    texts = textindex._texts
    monkeypatch.setattr(textindex, "_texts", lambda conn, rowids, *a: (reads.append(len(rowids)), texts(conn, rowids, *a))[1])
    for q in ("kettle zeppelin", "kettle zeppelin"):
        _same(_strict(indexed, q), _strict(fts5, q))
        _same(_hits(indexed, q), _hits(fts5, q))
    lag = len(indexed._text.lagging(indexed._conn))
    assert lag >= 5 and reads.count(lag) == 2  # once for the strict leg's words, once for the tolerant leg's stems
    indexed.delete(_rf(), written[0].reference)
    reads.clear()
    _same(_strict(indexed, "kettle zeppelin"), _strict(fts5, "kettle zeppelin"))
    assert reads and reads[0] == len(indexed._text.lagging(indexed._conn))  # the lag moved: read again
    indexed.close(), fts5.close()


def test_a_search_never_waits_for_the_index_to_catch_up(path, monkeypatch):
    """Past `LAG` changes the index catches up in the background: a search while another
    process holds the catch-up lock (here, this test) answers at once, from the index's
    last commit and the lagging rows, as FTS5 would; the next search once the lock is free
    catches the index up, still in the background."""
    import fcntl
    import threading

    monkeypatch.setattr(textindex, "LAG", 20)
    monkeypatch.setattr(textindex, "RETRY_SECONDS", 0.0, raising=False)
    store = _indexed(path)
    _hits(store, "kettle")
    mark = store._text.watermark
    for i in range(30):
        store.insert(_memory(6000 + i, f"quagga {i} " + _content(i)))
    with open(path.parent / "x.sqlite3.text.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process catching the index up
        got: list = []
        searching = threading.Thread(target=lambda: got.append(_hits(store, "quagga kettle")), daemon=True)
        searching.start()
        searching.join(60)  # a hang guard, not a timing: before, the search waited for the lock
        done = not searching.is_alive()
        if done:
            store._text.wait()  # the catch-up the search started gave way to the lock's holder
        fcntl.flock(held, fcntl.LOCK_UN)
    searching.join()
    assert done, "the search waited for the index's catch-up"
    _same(got[0], _hits(_fts5(path), "quagga kettle"))
    assert store._text.watermark == mark, "nothing caught up while the lock was held"
    _same(_hits(store, "quagga kettle"), _hits(_fts5(path), "quagga kettle"))
    store._text.wait()
    assert store._text.watermark > mark
    assert not store._text.lagging(store._conn), "caught up: nothing left to score from SQLite"
    store.close()


def test_a_catch_up_that_cannot_swap_its_commit_in_leaves_it_to_the_next_search(path, monkeypatch):
    """A search may hold the index's lock while it waits for the file lock a catch-up holds
    (rebuilding an outrun index): the finished catch-up does not wait for that search; the
    next search reads its commit from the watermark."""
    monkeypatch.setattr(textindex, "LAG", 20)
    monkeypatch.setattr(textindex, "PUBLISH_WAIT", 0.05)
    store = _indexed(path)
    _hits(store, "kettle")
    mark = store._text.watermark
    for i in range(30):
        store.insert(_memory(6000 + i, f"quagga {i} " + _content(i)))
    last = store._conn.execute("SELECT max(seq) FROM text_changes").fetchone()[0]
    with store._text._lock:  # as that search would
        store._text._catch_up_later(last)
        store._text.wait()  # returns: the catch-up gave up swapping its commit in
    stored = json.loads((path.parent / "x.sqlite3.text" / "watermark.json").read_text())["seq"]
    assert store._text.watermark == mark < stored == last
    _same(_hits(store, "quagga kettle"), _hits(_fts5(path), "quagga kettle"))
    assert store._text.watermark == stored
    store.close()



def test_a_background_catch_up_that_fails_says_so(path, monkeypatch, tmp_path, caplog):
    """A catch-up runs in a thread no caller waits on: its failure leaves the index behind
    (searches still score the lagging rows, so answers stay exact) and is logged, not swallowed."""
    import logging

    monkeypatch.setattr(textindex, "LAG", 20)
    store = _indexed(path)
    _hits(store, "kettle")
    mark = store._text.watermark
    for i in range(30):
        store.insert(_memory(6000 + i, f"quagga {i} " + _content(i)))
    broken = tmp_path / "not-a-database.sqlite3"
    broken.write_bytes(b"this is no SQLite file" * 100)
    monkeypatch.setattr(store._text, "_database", broken)
    last = store._conn.execute("SELECT max(seq) FROM text_changes").fetchone()[0]
    with caplog.at_level(logging.WARNING, logger="xmemo.store.textindex"):
        store._text._catch_up_alone(last)
    assert any("catch-up failed" in r.getMessage() for r in caplog.records)
    assert store._text.watermark == mark
    _same(_hits(store, "quagga kettle"), _hits(_fts5(path), "quagga kettle"))
    store.close()
