"""Every field of `Memory` survives each store, on every read path (get, list, search).

The memory below sets every stored field away from its default, and the first test
fails when a new field is left at its default, so a field added to `Memory` is
round-tripped here as soon as it exists."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from xmemo.auth import ReadFilter
from xmemo.models import Memory, Source, boundary_of
from xmemo.store import records

WRITTEN = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone.utc)


def every_field_set() -> Memory:
    """No embedding: it is not a record field, and the test index has no vector field."""
    return Memory(
        reference="mem_round_trip",
        type="decision",
        content="Every field survives the store: ünïcode, 한국어, and quotes \" '",
        title="Round trip",
        location="docs/records.md",
        bucket="ops",
        owner="alice",
        team="acme",
        project="infra",
        tags=("records", "stores"),
        boundary=boundary_of("alice", "acme", "infra"),
        source=Source(client_id="cli-1", agent="agent-7", session="séance-1"),
        created_at=WRITTEN,
        updated_at=WRITTEN + timedelta(seconds=1, microseconds=3),
        expires_at=WRITTEN + timedelta(days=1, microseconds=7),
        temporary=True,
        supersedes="mem_older",
        superseded_by="mem_newer",
        content_sha256="cd" * 32,
    )


def test_the_round_tripped_memory_sets_every_stored_field():
    memory = every_field_set()
    defaults = {name: f.get_default(call_default_factory=True) for name, f in Memory.model_fields.items()}
    left = [name for name in records.FIELDS if getattr(memory, name) == defaults[name]]
    assert not left, f"set these fields in every_field_set(): {left}"


def test_every_field_round_trips_on_every_read_path(store):
    memory = every_field_set()
    assert store.insert(memory) == (memory, False)
    # superseded and temporary: only a read that asks for both sees it
    rf = ReadFilter(holders=frozenset({"team:acme"}), now=WRITTEN, include_temporary=True, live_only=False)
    assert store.get(memory.reference, rf) == memory
    page, cursor = store.list(rf, 10, None)
    assert page == [memory] and cursor is None
    hits = store.search("records round trip", None, rf, lexical_k=5, semantic_k=0, strict=True).lexical
    assert [h.memory for h in hits] == [memory]


@pytest.mark.parametrize("field", ["created_at", "updated_at", "expires_at"])
def test_times_keep_their_microseconds_and_come_back_in_utc(store, field):
    memory = every_field_set()
    store.insert(memory)
    got = store.get(memory.reference, ReadFilter(holders=frozenset({"team:acme"}), now=WRITTEN, include_temporary=True, live_only=False))
    assert getattr(got, field) == getattr(memory, field)
    assert getattr(got, field).utcoffset() == timedelta(0)
