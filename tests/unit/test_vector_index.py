"""The embedded store's semantic leg once the vector index prunes by sign bits: scores stay
exact cosines, the nearest rows are still found, and visibility stays exact."""

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.auth import read_filter
from xmemo.ids import new_reference
from xmemo.models import Memory, boundary_of
from xmemo.store.sqlite import SQLiteStore

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
DIM = 384


def _memory(owner: str, i: int, vector: np.ndarray) -> Memory:
    when = T0 + timedelta(seconds=i)
    content = f"note {owner} {i}"
    return Memory(
        reference=new_reference(int(when.timestamp() * 1000)), type="note", content=content, location="b", bucket="b",
        owner=owner, boundary=boundary_of(owner, None, None), created_at=when, updated_at=when,
        content_sha256=tools.content_hash(content), embedding=tuple(float(x) for x in vector),
    )


def _clustered(rng: np.random.Generator, n: int, topics: int = 100) -> np.ndarray:
    """Unit vectors around a shared direction (like e5's: every cosine is high), in topics
    (memories about one thing are nearer each other than to the rest)."""
    common = rng.normal(size=DIM)
    centres = np.random.default_rng(1).normal(size=(topics, DIM))
    v = 4 * common / np.linalg.norm(common) + centres[rng.integers(0, topics, n)] + 0.6 * rng.normal(size=(n, DIM))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _rf(owner: str):
    return read_filter(make_principal(owner), T0 + timedelta(days=1))


def _semantic(store: SQLiteStore, owner: str, q: np.ndarray, k: int):
    return store.search("", q, _rf(owner), lexical_k=0, semantic_k=k, strict=False).semantic


@pytest.fixture
def pruned(tmp_path):
    """2,000 of alice's vectors and 400 of bob's, in a store that prunes past 500 rows."""
    rng = np.random.default_rng(7)
    vectors = _clustered(rng, 2400)
    store = SQLiteStore(tmp_path / "x.sqlite3", exact_vectors=500)
    owners = ["alice"] * 2000 + ["bob"] * 400
    rng.shuffle(owners)
    refs = store.insert_many([_memory(o, i, v) for i, (o, v) in enumerate(zip(owners, vectors))])
    yield store, vectors, owners, [m.reference for m, _ in refs]
    store.close()


def test_pruned_leg_finds_the_exact_nearest_with_exact_scores(pruned):
    store, vectors, owners, refs = pruned
    rng = np.random.default_rng(8)
    found = []
    for q in _clustered(rng, 20):
        hits = _semantic(store, "alice", q, 10)
        assert not store._vectors.exact
        mine = [i for i, o in enumerate(owners) if o == "alice"]
        cos = vectors[mine] @ q
        exact = [refs[mine[j]] for j in np.argsort(-cos)[:10]]
        for h in hits:  # every score is the true cosine of that memory's vector
            assert h.score == pytest.approx(float(vectors[refs.index(h.memory.reference)] @ q), abs=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        found.append(len({h.memory.reference for h in hits} & set(exact)) / 10)
    assert np.mean(found) >= 0.95


def test_pruned_leg_never_returns_another_holders_memory(pruned):
    store, vectors, owners, refs = pruned
    bob = {r for r, o in zip(refs, owners) if o == "bob"}
    for i in [j for j, o in enumerate(owners) if o == "bob"][:10]:  # queries that are bob's own vectors
        hits = _semantic(store, "alice", vectors[i], 30)
        assert len(hits) == 30 and not {h.memory.reference for h in hits} & bob
        assert _semantic(store, "bob", vectors[i], 1)[0].memory.reference == refs[i]
    assert _semantic(store, "carol", vectors[0], 10) == []


def test_a_holder_with_few_rows_gets_an_exact_answer(pruned):
    """Bob's 400 rows are fewer than the rescored pool: all are rescored, so the answer is exact."""
    store, vectors, owners, refs = pruned
    mine = [i for i, o in enumerate(owners) if o == "bob"]
    q = _clustered(np.random.default_rng(9), 1)[0]
    exact = [refs[mine[j]] for j in np.argsort(-(vectors[mine] @ q))[:50]]
    assert [h.memory.reference for h in _semantic(store, "bob", q, 50)] == exact


def test_index_switches_to_bits_as_the_store_grows_and_keeps_new_rows(tmp_path):
    rng = np.random.default_rng(10)
    vectors = _clustered(rng, 300)
    store = SQLiteStore(tmp_path / "x.sqlite3", exact_vectors=100)
    store.insert_many([_memory("alice", i, v) for i, v in enumerate(vectors[:60])])
    assert _semantic(store, "alice", vectors[5], 1)[0].score == pytest.approx(1.0, abs=1e-5)
    assert store._vectors.exact
    for i in range(60, 300):  # one write at a time: each refresh appends
        store.insert(_memory("alice", i, vectors[i]))
        if i % 40 == 0:
            _semantic(store, "alice", vectors[i], 1)
    assert not store._vectors.exact
    for i in (3, 150, 299):
        top = _semantic(store, "alice", vectors[i], 1)[0]
        assert top.score == pytest.approx(1.0, abs=1e-5) and top.memory.content == f"note alice {i}"
    store.close()


def test_deleted_memories_leave_the_pruned_leg(pruned):
    store, vectors, owners, refs = pruned
    i = owners.index("alice")
    assert _semantic(store, "alice", vectors[i], 1)[0].memory.reference == refs[i]
    assert store.delete(_rf("alice"), refs[i]) == 1
    assert refs[i] not in {h.memory.reference for h in _semantic(store, "alice", vectors[i], 20)}


def test_hamming_in_blocks_and_threads_equals_a_plain_popcount(pruned, monkeypatch):
    """The blocked, multi-threaded pass (used past 200k rows) computes the same distances as
    a direct popcount of every row's bits against the query's, the last block partial."""
    from xmemo.store import vectors as index_module

    store, vectors, owners, refs = pruned
    _semantic(store, "alice", vectors[0], 1)
    index = store._vectors
    q = _clustered(np.random.default_rng(11), 1)[0]
    query = index._signs(q.reshape(1, -1))[0]
    bits = np.stack([c.view for c in index.bits], axis=1)
    plain = np.bitwise_count(bits ^ query).sum(axis=1)
    assert np.array_equal(index._hamming(q), plain)  # one thread, one block
    monkeypatch.setattr(index_module, "BLOCK", 333)
    monkeypatch.setattr(index_module, "PARALLEL_ROWS", 0)
    monkeypatch.setattr(index_module, "cores", lambda: 3)
    assert np.array_equal(index._hamming(q), plain)  # 3 threads, 8 blocks, the last of 69 rows
    hits = _semantic(store, "alice", q, 10)  # and the leg answers through it as before
    assert len(hits) == 10 and {owners[refs.index(h.memory.reference)] for h in hits} == {"alice"}


def test_many_deletions_rebuild_the_index_from_a_sample_of_rowids(pruned, monkeypatch):
    """The index looks a sample of its rowids up (no table scan) and rebuilds when more than a
    tenth of them is gone; a few deletions leave it as it is."""
    from xmemo.store import vectors as index_module

    store, vectors, owners, refs = pruned
    _semantic(store, "alice", vectors[0], 1)
    monkeypatch.setattr(index_module, "RECOUNT_SECONDS", -1.0)  # look at every change
    for ref in refs[:50]:  # 2% of the rows
        store.delete(read_filter(make_principal(owners[refs.index(ref)]), T0 + timedelta(days=1)), ref)
    _semantic(store, "alice", vectors[0], 1)
    assert store._vectors.rowids.size == 2400
    assert store.delete(_rf("bob")) == 400 - owners[:50].count("bob")  # bob's rows: 17% of the index
    _semantic(store, "alice", vectors[0], 1)
    assert store._vectors.rowids.size == 2000 - owners[:50].count("alice")
    assert "bob" not in {o for o in store._vectors.codes}


def test_int8_rescoring_in_blocks_equals_the_whole_matrix_product(pruned):
    """The rescoring copy is read `RESCORE_BLOCK` rows at a time through reused scratch: the
    products of converting every pooled row at once (to float32 rounding: BLAS may order a
    block's sums differently), the last block partial and later queries reusing the scratch."""
    store, vectors, owners, refs = pruned
    _semantic(store, "alice", vectors[0], 1)
    index = store._vectors
    for seed, size in ((12, 700), (13, 256), (14, 3)):
        rng = np.random.default_rng(seed)
        pool = rng.choice(index.rowids.size, size, replace=False)
        q = _clustered(rng, 1)[0]
        whole = index.small.view[pool].astype(np.float32) @ q
        assert np.allclose(index._int8_dots(pool, q), whole, rtol=1e-6, atol=1e-4)


def _reopened(path, monkeypatch) -> tuple[SQLiteStore, list[int]]:
    """The store at `path` opened anew, and a list that counts the rows its index reads
    from the table."""
    from xmemo.store import vectors as index_module

    read: list[int] = []
    plain = index_module.VectorIndex._append
    monkeypatch.setattr(index_module.VectorIndex, "_append", lambda self, rows: (read.append(len(rows)), plain(self, rows))[1])
    return SQLiteStore(path, exact_vectors=500), read


def test_a_reopened_store_maps_its_saved_index_and_answers_the_same(tmp_path, monkeypatch):
    """The pruned index is saved beside the store and memory-mapped by the next process,
    which reads from the table only the rows written since (into the file's spare rows,
    privately), and answers as a fresh build."""
    from xmemo.store import vectors as index_module

    monkeypatch.setattr(index_module, "SAVE_ROWS", 100)
    rng = np.random.default_rng(11)
    vectors = _clustered(rng, 1500)
    first = SQLiteStore(tmp_path / "x.sqlite3", exact_vectors=500)
    first.insert_many([_memory("alice", i, v) for i, v in enumerate(vectors[:1200])])
    queries = _clustered(np.random.default_rng(12), 5)
    _semantic(first, "alice", queries[0], 10)  # builds and saves
    assert (tmp_path / "x.sqlite3.vectors").exists()
    first.insert_many([_memory("alice", i, v) for i, v in enumerate(vectors[1200:], 1200)])  # after the save
    first.close()

    again, read = _reopened(tmp_path / "x.sqlite3", monkeypatch)
    after = [[(h.memory.reference, round(h.score, 6)) for h in _semantic(again, "alice", q, 10)] for q in queries]
    assert sum(read) == 300  # only the rows written after the save
    assert isinstance(again._vectors.small._data, np.memmap)  # appended in the file's spare rows, nothing copied
    top = _semantic(again, "alice", vectors[1400], 1)[0]
    assert top.memory.content == "note alice 1400" and top.score == pytest.approx(1.0, abs=1e-5)
    fresh = SQLiteStore(tmp_path / "x.sqlite3", exact_vectors=500)
    fresh._vectors.path = None  # read every row from the table, as before the index was saved
    assert after == [[(h.memory.reference, round(h.score, 6)) for h in _semantic(fresh, "alice", q, 10)] for q in queries]
    again.close(), fresh.close()


def test_a_saved_index_whose_last_row_was_deleted_or_reused_is_not_trusted(tmp_path, monkeypatch):
    """SQLite gives a deleted last rowid to the next row: the saved vector under that rowid
    is another memory's, so such a file is ignored and the table read (and the file
    rewritten); so is a file beside another store's table."""
    from xmemo.store import vectors as index_module

    monkeypatch.setattr(index_module, "SAVE_ROWS", 100)
    rng = np.random.default_rng(13)
    vectors = _clustered(rng, 802)
    store = SQLiteStore(tmp_path / "x.sqlite3", exact_vectors=500)
    refs = [m.reference for m, _ in store.insert_many([_memory("alice", i, v) for i, v in enumerate(vectors[:800])])]
    _semantic(store, "alice", vectors[0], 1)  # builds and saves
    assert store.delete(_rf("alice"), refs[-1]) == 1
    reused = store.insert(_memory("alice", 800, vectors[800]))[0]
    store.close()

    again, read = _reopened(tmp_path / "x.sqlite3", monkeypatch)
    top = _semantic(again, "alice", vectors[800], 1)[0]
    assert top.memory.reference == reused.reference and top.score == pytest.approx(1.0, abs=1e-5)
    assert sum(read) == 800  # the file was ignored: every row read again
    again.close()

    other = SQLiteStore(tmp_path / "y.sqlite3", exact_vectors=500)
    other.insert_many([_memory("alice", i, v) for i, v in enumerate(_clustered(np.random.default_rng(14), 800))])
    other.close()
    (tmp_path / "y.sqlite3.vectors").write_bytes((tmp_path / "x.sqlite3.vectors").read_bytes())
    elsewhere, read = _reopened(tmp_path / "y.sqlite3", monkeypatch)
    _semantic(elsewhere, "alice", vectors[0], 1)
    assert sum(read) == 800
    elsewhere.close()


def test_a_reindexed_store_never_maps_the_index_saved_before(tmp_path, monkeypatch):
    """`xmemo reindex` replaces vectors under the same rowids: the file saved before holds
    the old model's vectors, so the next process must read the new ones from the table."""
    from xmemo.pin import Pin
    from xmemo.store import vectors as index_module

    monkeypatch.setattr(index_module, "SAVE_ROWS", 100)
    old, new = _clustered(np.random.default_rng(21), 800), _clustered(np.random.default_rng(22), 800)
    store = SQLiteStore(tmp_path / "x.sqlite3", exact_vectors=500)
    store.insert_many([_memory("alice", i, v) for i, v in enumerate(old)])
    _semantic(store, "alice", old[0], 1)  # builds and saves
    assert (tmp_path / "x.sqlite3.vectors").exists()
    rowids = [r for (r,) in store._conn.execute("SELECT rowid FROM memories ORDER BY rowid")]
    store.replace_vectors(Pin("other", None, DIM), {r: (new[i], None) for i, r in enumerate(rowids)})
    store.close()
    again = SQLiteStore(tmp_path / "x.sqlite3", exact_vectors=500, pin=None)
    top = _semantic(again, "alice", new[300], 1)[0]
    assert top.memory.content == "note alice 300" and top.score == pytest.approx(1.0, abs=1e-5)
    again.close()


def test_the_leg_reads_its_best_visible_rows_in_one_round_trip_and_a_narrow_filter_gets_the_same_best(pruned):
    """The rows are read whole in the index's order with the filter applied, until k are
    visible: a caller who sees them all pays one statement (the filter checked apart and
    then the rows read was two), and a request filter that hides most rows still gets
    the k best by the index's scores of those it may see, by exact cosine."""
    store, vectors, owners, refs = pruned
    q = _clustered(np.random.default_rng(11), 1)[0]
    _semantic(store, "alice", q, 40)  # the index caught up with the table
    statements = []
    store._conn.set_trace_callback(lambda sql: statements.append(sql) if "FROM memories" in sql else None)
    hits = _semantic(store, "alice", q, 40)
    store._conn.set_trace_callback(None)
    assert len(hits) == 40 and len(statements) == 1, statements
    narrow = read_filter(make_principal("alice"), T0 + timedelta(days=1), created_after=T0 + timedelta(seconds=2000))
    for k in (5, 60):
        got = store.search("", q, narrow, lexical_k=0, semantic_k=k, strict=False).semantic
        # the reference: the index's candidates, as wide as the leg widened, the visible k best
        want = k * 2 + 8
        while True:
            ids, approx, _ = store._vectors.nearest(q, narrow.holders, want)
            seen = [(-s, r) for r, s in zip(ids.tolist(), approx.tolist())
                    if owners[r - 1] == "alice" and r - 1 >= 2000]
            if len(seen) >= k or ids.size < want:
                break
            want *= 4
        best = [r for _, r in sorted(seen)[:k]]
        expected = sorted(best, key=lambda r: (-float(vectors[r - 1] @ q), -r))
        assert [h.memory.reference for h in got] == [refs[r - 1] for r in expected]


# -- the pass and the cut against the code they replace -----------------------------------
def _smallest_by_whole_histogram(values: np.ndarray, limit: int, visible: int) -> np.ndarray:
    """The cut as it was found before: a histogram of every distance."""
    limit = min(limit, visible)
    cut = int(np.searchsorted(np.cumsum(np.bincount(values)), limit))
    idx = np.flatnonzero(values <= cut)
    if len(idx) > limit:
        idx = idx[np.argpartition(values[idx], limit - 1)[:limit]]
    return idx[np.argsort(values[idx], kind="stable")]


def _hamming_word_by_word(columns, query, out, starts) -> None:
    """The pass as it was: each word's counts added into the uint16 distances."""
    from xmemo.store.vectors import BLOCK

    scratch, count = np.empty(BLOCK, dtype=np.uint64), np.empty(BLOCK, dtype=np.uint8)
    for a in starts:
        b = min(a + BLOCK, len(out))
        m, into = b - a, out[a:b]
        into[:] = 0
        for w, column in enumerate(columns):
            np.bitwise_xor(column[a:b], query[w], out=scratch[:m])
            np.bitwise_count(scratch[:m], out=count[:m])
            np.add(into, count[:m], out=into)


def _distances(rng: np.random.Generator, n: int, kind: str) -> np.ndarray:
    if kind == "spread":
        return rng.integers(0, 385, n).astype(np.uint16)
    if kind == "narrow":  # few distinct values: many ties at the cut
        return rng.binomial(384, 0.5, n).astype(np.uint16)
    from xmemo.store.vectors import CUT_STRIDE

    if kind == "sampled-nearest":  # the sampled rows are the nearest: the guess is short, the whole histogram answers
        out = rng.integers(150, 250, n).astype(np.uint16)
        out[::CUT_STRIDE] = rng.integers(0, 40, len(out[::CUT_STRIDE]))
        return out
    raise ValueError(kind)


def test_the_cut_from_a_sample_takes_the_rows_the_whole_histogram_took(monkeypatch):
    """The nearest rows are the same indices in the same order as a histogram of every
    distance gave, with ties at the cut, with rows the caller may not see (`_FAR`), with
    few visible rows and with near rows the sample misses; and on a store's usual
    distances no histogram of every row is taken any more (it copied a million
    distances to int64 per query)."""
    from xmemo.store import vectors as index_module

    rng = np.random.default_rng(21)
    lengths: list[int] = []
    plain_bincount = np.bincount
    monkeypatch.setattr(np, "bincount", lambda x, *a, **kw: (lengths.append(len(x)), plain_bincount(x, *a, **kw))[1])
    for kind in ("spread", "narrow", "sampled-nearest"):
        for n, limit in ((200_000, 5_000), (40_000, 1_000), (40_000, 2_600), (3_000, 500)):
            values = _distances(rng, n, kind)
            hidden = rng.random(n) < 0.3
            for far in (None, hidden, rng.random(n) < 0.999):
                v = values.copy()
                if far is not None:
                    v[far] = index_module._FAR
                visible = n - int(far.sum()) if far is not None else n
                lengths.clear()
                got = index_module._smallest(v, limit, visible)
                histograms = list(lengths)
                assert np.array_equal(got, _smallest_by_whole_histogram(v, limit, visible)), (kind, n, limit)
                stride = index_module.CUT_STRIDE
                if kind != "sampled-nearest" and n >= stride * limit and visible > stride * limit:
                    assert n not in histograms, (kind, n, limit)
                if kind == "sampled-nearest" and far is None and n >= stride * limit:
                    assert n in histograms  # the fallback was taken, and answered the same


def test_the_pruned_leg_returns_the_rows_and_scores_it_returned_before(monkeypatch):
    """`VectorIndex.nearest` through the new pass and cut against the code they replace,
    on the same random index: the same rowids in the same order with the same scores, for
    every holder's view, at widths that take the sampled cut and widths that do not."""
    from xmemo.store import vectors as index_module

    monkeypatch.setattr(index_module, "RESCORED", 1_000)
    monkeypatch.setattr(index_module, "BLOCK", 4_096)  # several blocks, the last partial
    rng = np.random.default_rng(22)
    n = 24_000
    vectors = _clustered(rng, n)
    index = index_module.VectorIndex(exact_rows=1_000)
    holders = rng.choice(["alice", "bob", "carol"], n, p=[0.8, 0.15, 0.05])
    index._append([(i + 1, str(h), v.tobytes()) for i, (h, v) in enumerate(zip(holders, vectors))])
    assert not index.exact
    queries = _clustered(np.random.default_rng(23), 12)
    cases = [(frozenset({"alice", "bob", "carol"}), 60), (frozenset({"alice"}), 240), (frozenset({"bob"}), 60),
             (frozenset({"carol", "bob"}), 1_500), (frozenset({"carol"}), 30)]
    new = [index.nearest(q, who, limit) for q in queries for who, limit in cases]
    monkeypatch.setattr(index_module, "_smallest", _smallest_by_whole_histogram)
    monkeypatch.setattr(index_module, "_hamming_blocks", _hamming_word_by_word)
    old = [index.nearest(q, who, limit) for q in queries for who, limit in cases]
    for (ids, scores, exact), (old_ids, old_scores, old_exact) in zip(new, old):
        assert np.array_equal(ids, old_ids) and np.array_equal(scores, old_scores) and exact == old_exact


@pytest.mark.parametrize("dim", [64, 200, 448])
def test_the_pass_sums_any_number_of_words_in_bytes_exactly(dim):
    """Words are summed three to a byte: one, four (a group and one left over) and seven
    words give the plain popcount's distances, up to the largest (every bit different)."""
    from xmemo.store import vectors as index_module

    rng = np.random.default_rng(dim)
    v = rng.normal(size=(3_000, dim)).astype(np.float32)
    index = index_module.VectorIndex(exact_rows=100)
    index._append([(i + 1, "alice", x.tobytes()) for i, x in enumerate(v)])
    for q in (v[0], -v[1] + 2 * index.mean, rng.normal(size=dim).astype(np.float32)):
        query = index._signs(q.reshape(1, -1))[0]
        bits = np.stack([c.view for c in index.bits], axis=1)
        assert np.array_equal(index._hamming(q), np.bitwise_count(bits ^ query).sum(axis=1))
    assert index._hamming(-v[1] + 2 * index.mean)[1] == dim  # the mirrored row: every bit differs


def test_semantic_hits_decode_their_memory_only_when_read(tmp_path):
    """`recall` fetches four times the semantic hits it keeps and reads only the reference
    and score of the rest: those are not decoded, and a hit read gives the stored memory."""
    rng = np.random.default_rng(7)
    store = SQLiteStore(tmp_path / "s.sqlite3")
    store.insert_many([_memory("ann", i, v) for i, v in enumerate(_clustered(rng, 40))])
    hits = _semantic(store, "ann", _clustered(rng, 1)[0], 20)
    assert len(hits) == 20
    refs = [h.reference for h in hits]
    assert not any(getattr(h, "decoded", True) for h in hits)
    first = hits[0].memory
    assert hits[0].decoded and not any(h.decoded for h in hits[1:])
    assert first == store.get(refs[0], _rf("ann")) and first.reference == refs[0]
    assert hits[0].memory is first  # decoded once
    assert [h.memory.reference for h in hits] == refs
    store.close()


def test_a_hit_s_place_is_read_without_decoding_its_memory(tmp_path):
    """`fusion.leg_weights` reads every fetched hit's location and bucket, kept or not: from
    the row, so the hits `recall` drops stay undecoded, and the same as the memory's."""
    rng = np.random.default_rng(8)
    store = SQLiteStore(tmp_path / "s.sqlite3")
    store.insert_many([_memory("ann", i, v) for i, v in enumerate(_clustered(rng, 40))])
    hits = _semantic(store, "ann", _clustered(rng, 1)[0], 20)
    places = [h.place for h in hits]
    assert not any(h.decoded for h in hits)
    assert places == [(h.memory.location, h.memory.bucket) for h in hits]
    store.close()
