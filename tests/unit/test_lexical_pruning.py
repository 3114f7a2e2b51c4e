"""On a large store the any-term lexical leg leaves out the commonest query terms (they
match most rows and weigh least); strict search and small stores never do."""

from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import make_principal
from xmemo import tools
from xmemo.auth import read_filter
from xmemo.ids import new_reference
from xmemo.models import Memory, boundary_of
from xmemo.store.sqlite import SQLiteStore

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _memory(i: int, content: str) -> Memory:
    when = T0 + timedelta(seconds=i)
    return Memory(
        reference=new_reference(int(when.timestamp() * 1000)), type="note", content=content, location="b", bucket="b",
        owner="alice", boundary=boundary_of("alice", None, None), created_at=when, updated_at=when,
        content_sha256=tools.content_hash(content),
    )


@pytest.fixture
def path(tmp_path):
    """300 memories that all say 'kettle'; 3 also say 'zeppelin', 43 'harbour' (one both)."""
    p = tmp_path / "x.sqlite3"
    store = SQLiteStore(p)
    store.insert_many(
        [_memory(i, f"kettle note {i}" + (" zeppelin" if i % 100 == 7 else "") + (" harbour" if i % 7 == 0 else "")) for i in range(300)]
    )
    store.close()
    return p


RF = read_filter(make_principal("alice"), T0 + timedelta(days=1))


def _lexical(store, query, k=50, strict=False):
    return [h.memory.content for h in store.search(query, None, RF, lexical_k=k, semantic_k=0, strict=strict).lexical]


def test_commonest_term_is_left_out_past_the_budget(path):
    pruned, full = SQLiteStore(path, lexical_budget=100), SQLiteStore(path, lexical_budget=0)
    got, want = _lexical(pruned, "kettle zeppelin harbour"), _lexical(full, "kettle zeppelin harbour")
    assert len(want) == 50 and len(got) == 45  # 'kettle' (every row) left out: only zeppelin/harbour rows
    assert all("zeppelin" in c or "harbour" in c for c in got)
    assert got[:3] == want[:3] and all("zeppelin" in c for c in got[:3])  # the best hits are the same
    pruned.close(), full.close()


def test_rarest_term_stays_and_strict_search_is_untouched(path):
    pruned = SQLiteStore(path, lexical_budget=10)
    assert len(_lexical(pruned, "kettle")) == 50  # a lone common term still searches
    assert len(_lexical(pruned, "kettle harbour", k=100)) == 43  # kettle left out, harbour (14%) kept as the rarest
    assert len(_lexical(pruned, "kettle zeppelin", strict=True)) == 3
    pruned.close()


def test_small_store_is_never_pruned(path):
    store = SQLiteStore(path, lexical_budget=1000)  # more than the store's rows
    assert len(_lexical(store, "kettle zeppelin", k=100)) == 100
    store.close()
