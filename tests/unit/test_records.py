"""The store rules both stores share (`xmemo.store.records`), and the two places outside
`Memory` that a new field must be declared in: the SQLite schema and the OpenSearch
mapping. Both stores' behaviour under these rules is the contract suite's."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone

import pytest

from xmemo.auth import ReadFilter
from xmemo.errors import InvalidRequest
from xmemo.models import Memory
from xmemo.store import records
from xmemo.store.opensearch import queries as q
from xmemo.store.opensearch.index import mappings
from xmemo.store.sqlite import ROW, SCHEMA, SQLiteStore

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=timezone.utc)


def memory(**kw) -> Memory:
    base = dict(reference="mem_A", type="note", content="hello", location="default", bucket="default", owner="alice",
                boundary="owner:alice", created_at=NOW, updated_at=NOW, content_sha256="ab" * 32)
    return Memory(**{**base, **kw})


def test_kinds_are_read_from_the_model():
    kinds = records.FIELDS
    assert (kinds["created_at"], kinds["expires_at"], kinds["temporary"]) == (records.TIME, records.TIME, records.FLAG)
    assert (kinds["tags"], kinds["source"], kinds["title"], kinds["type"]) == (records.LIST, records.OBJECT, records.TEXT, records.TEXT)
    assert "embedding" not in kinds and records.STORED[0] == "holder"
    assert records._kind(int | None) == records._kind(float) == records.NUMBER


def test_the_sqlite_schema_declares_a_column_for_every_stored_field():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    columns = {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
    assert columns == {"rowid", *records.STORED, "embedding"}


def test_the_opensearch_mapping_declares_every_stored_field():
    derived = {"text", "terms", "words", "context", "length"}  # search text, ranked terms, strict words, neighbouring context, row length
    assert set(mappings(None)["properties"]) == {*records.STORED, *derived}
    # the vector, its packed copy (v6) and the token states (v7): `records.DERIVED` kept the index's own way
    assert set(mappings(8)["properties"]) == {*records.STORED, *derived, "embedding", "vector_bytes", "token_states"}


def test_a_file_older_than_a_field_gains_its_column_on_open(tmp_path):
    """`title` stands for a field added after the file was written."""
    path = tmp_path / "old.sqlite3"
    old_schema = SCHEMA.replace("    title          TEXT,\n", "")
    assert old_schema != SCHEMA
    with sqlite3.connect(path) as conn:
        conn.executescript(old_schema)
        row = records.to_record(memory(reference="mem_old"), ROW)
        del row["title"]
        conn.execute(f"INSERT INTO memories ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
    conn.close()
    store = SQLiteStore(path)
    try:
        rf = ReadFilter(holders=frozenset({"owner:alice"}), now=NOW)
        assert store.get("mem_old", rf).title is None
        store.insert(memory(reference="mem_new", content="titled", content_sha256="ef" * 32, title="A title"))
        assert store.get("mem_new", rf).title == "A title"
    finally:
        store.close()


def test_both_encodings_round_trip_a_memory():
    m = memory(title="t", team="acme", tags=("a", "b"), temporary=True, expires_at=NOW + timedelta(seconds=60))
    assert records.from_record(records.to_record(m, ROW), ROW) == m
    assert records.from_record(records.to_record(m, q.DOCUMENT), q.DOCUMENT) == m
    row = records.to_record(m, ROW)
    assert (row["tags"], row["temporary"], row["holder"]) == (" a b ", 1, "team:acme")


def test_the_duplicate_key_and_when_a_duplicate_gives_way():
    m = memory()
    assert records.duplicate_key(m) == ("owner:alice", "owner:alice", "default", False, "ab" * 32)
    later = memory(reference="mem_B", created_at=NOW + timedelta(seconds=10))
    assert records.is_duplicate(m, later)
    assert records.is_duplicate(memory(expires_at=NOW + timedelta(seconds=11)), later)
    assert not records.is_duplicate(memory(expires_at=NOW + timedelta(seconds=10)), later)  # expired as it is written
    assert not records.is_duplicate(memory(superseded_by="mem_C"), later)


def test_search_text_is_title_location_tags_and_content():
    assert records.search_text(memory(title="T", tags=("x", "y"))) == "T\ndefault\nx y\nhello"
    assert records.search_text(memory()) == "default\nhello"


def test_cursors_round_trip_and_reject_what_the_service_did_not_issue():
    assert records.decode_cursor(records.encode_cursor([1.5, 7]), float, int) == [1.5, 7]
    assert records.decode_cursor(records.encode_cursor([17, "mem_X"]), int, str) == [17, "mem_X"]
    for bad in ("not-a-cursor", records.encode_cursor([1]), records.encode_cursor([1, 2]), records.encode_cursor({"a": 1})):
        with pytest.raises(InvalidRequest):
            records.decode_cursor(bad, int, str)


def test_ranked_terms_weigh_a_memorys_terms_against_its_neighbours_by_repetition():
    assert records.terms_text(["Caroline's paintings", "", "작업을"]) == "carolin s paint 작업 업을"
    own, ctx = "carolin paint", "race"
    assert records.ranked_terms(own, ctx, 0.5) == "carolin paint carolin paint race"  # the SQLite row's count and length
    assert records.ranked_terms(own, "", 0.5) == "carolin paint carolin paint"
    assert records.ranked_terms(own, ctx, 0.25) == " ".join([own] * 4 + [ctx])
    assert records.ranked_terms(own, "", 0.25) == " ".join([own] * 4)  # alike with or without neighbours
    assert records.ranked_terms(own, ctx, 2) == f"{own} {ctx} {ctx}"
    assert records.ranked_terms(own, ctx, 0) == f"{own} {own}"
    for weight in (0, 0.25, 0.5, 1, 2):  # the copies the LoCoMo scoring replicas divide by are the ones written
        copies, times = records.ranked_copies(weight)
        assert records.ranked_terms(own, ctx, weight).split() == own.split() * copies + ctx.split() * times


def test_a_row_reader_reads_what_from_record_reads():
    """`records.row_reader` (the SQLite store's reads: values by position, the plan made
    once) gives `from_record`'s memory, for values present or None, with values past
    the named ones (a score, an embedding) ignored, and a shared source record (the
    store keeps its decoded JSON) never shared between memories."""
    from xmemo.models import Source

    names = ("rowid", *records.STORED)
    read = records.row_reader(names, ROW)
    full = memory(title="t", tags=("a", "b"), team="core", project="p", expires_at=NOW + timedelta(days=1), temporary=True,
                  supersedes="mem_0", source=Source(client_id="c", agent="x"))
    for m in (memory(), full):
        record = records.to_record(m, ROW)
        row = (7, *(record.get(name) for name in records.STORED), b"\x00" * 8, -1.5)
        assert read(row) == records.from_record(record, ROW) == m
    a, b = (read((1, *(records.to_record(full, ROW).get(n) for n in records.STORED))) for _ in range(2))
    assert a.source == b.source and a.source is not b.source
