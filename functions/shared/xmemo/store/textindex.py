"""The tolerant lexical leg of a large embedded store: a tantivy index beside the SQLite
file, derived from the full-text rows and never the source of truth.

FTS5 scores every row that shares any query term, so an any-term query over a large store
costs as much as its commonest term's posting list. tantivy keeps block maxima of its
posting lists and skips the blocks that cannot reach the current top k (block-max WAND),
so it finds candidates in about a millisecond at 100k memories (`xmemo bench latency`).
Its BM25 is not FTS5's (another IDF, one field), so its order only chooses candidates:
`Statistics` then scores them exactly as FTS5's `bm25()` would, from the rows in SQLite. The
strict leg (`search_memory`: every term, in the `words` column) asks it too: FTS5 scores
every row that holds all the terms, which at 1M memories made `search_memory` slower than
`recall`.

Consistency. Every write of a full-text row also appends its rowid to `text_changes`
in the same SQLite transaction. The index records, in `watermark.json` written after
each tantivy commit, the last change and the last row it holds (rows past it are new
even when nothing logged them: an older version of the store, `bench latency --copies`).
A search reads the changes past the watermark and the rows past its last row, and
scores those rows from SQLite too, so an acknowledged write is found at once; the index
itself catches up only every `LAG` changes, in a thread of its own: a search never waits
for the index's commit (nor, behind the file lock, for another process's), it scores the
rows past the commit it reads. After a crash the watermark is at worst behind the index,
and replaying a change (delete the rowid, add the row as it is now) is idempotent. A missing,
unreadable or outrun index (its changes trimmed away) is rebuilt from the table."""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable

from .fts5rank import idf as _idf
from .fts5rank import B, K1, row_score

log = logging.getLogger("xmemo.store.textindex")
LAG = 256  # changes scored from SQLite before the index catches up
COUNTED_TERMS = 50_000  # live document counts kept for one commit's searcher
RETRY_SECONDS = 1.0  # between background catch-ups that could not start (the writer held elsewhere)
PUBLISH_WAIT = 1.0  # seconds a finished catch-up waits to swap in its commit (`_publish`)
REBUILD_LAG = 50_000  # changes kept in `text_changes`; an index further behind is rebuilt
FORMAT = 2  # of the index's fields (2: `words` added for the strict leg); an index of another format is rebuilt
STRICT_POOL = 8  # × k candidates the strict leg rescores (its order in tantivy weighs lengths otherwise)

CHANGES = """CREATE TABLE IF NOT EXISTS text_changes (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    rowid INTEGER NOT NULL
)"""


def log_change(conn: sqlite3.Connection, rowids) -> None:
    """Record that these full-text rows were added, changed or deleted (inside the
    caller's write transaction)."""
    conn.executemany("INSERT INTO text_changes (rowid) VALUES (?)", [(int(r),) for r in rowids])


def trim_changes(conn: sqlite3.Connection, applied: int) -> None:
    """Forget changes well behind what the index holds (`applied`; a process that read an
    older watermark a moment ago may still ask for the last few) and any older than the
    last `REBUILD_LAG` (an index that far behind is rebuilt), inside a write transaction."""
    conn.execute(
        "DELETE FROM text_changes WHERE seq <= max(?, coalesce((SELECT max(seq) FROM text_changes), 0) - ?)",
        (applied - 8 * LAG, REBUILD_LAG),
    )


def _varints(blob: bytes) -> list[int]:
    """FTS5's record format: unsigned big-endian base-128 varints."""
    out, value = [], 0
    for byte in blob:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = 0
    return out


class Lag(list):
    """The rowids changed since the index's commit (`TextIndex.lagging`), and what says they
    and their texts are still those: the searcher and the last change. Until either moves,
    what `doc_freqs` reads of them is read once, not on every search (up to `LAG` rows, and
    a count in the index per query term)."""

    def __init__(self, rowids, state) -> None:
        super().__init__(rowids)
        self.state = state


class TextIndex:
    """The derived index of one store (folder `path`); thread-safe within a process, and
    several processes may share it (one of them catches it up at a time)."""

    def __init__(self, path: Path, database: Path) -> None:
        """`database`: the SQLite file the index derives from (the background catch-up
        reads it through a connection of its own)."""
        self.path = path
        self._database = database
        self._lock = threading.RLock()  # the searcher and what it holds; a catch-up swaps them under it
        self._catching: threading.Thread | None = None
        self._tried_at = -RETRY_SECONDS
        self._index = None
        self._searcher = None
        self._schema = None
        # what the searcher's commit holds: every change up to `watermark` and every row up
        # to `max_rowid` (rows written by a version of the store that kept no change log)
        self.watermark = -1
        self.max_rowid = 0
        self._missing = False
        # live rows per term in the current searcher's commit (a count query walks the whole
        # posting list: at 1M, most of the leg's time); a new searcher starts afresh
        self._counts: tuple[object, dict[tuple[str, str], int]] = (None, {})
        # the lagging rows' words by field and their count shifts by (field, term), for one `Lag.state`
        self._lag_kept: tuple[object, dict, dict] = (None, {}, {})

    # -- opening, building, catching up ----------------------------------------------------
    def _read_watermark(self) -> tuple[int, int] | None:
        try:
            stored = json.loads((self.path / "watermark.json").read_text())
            return (int(stored["seq"]), int(stored["rowid"])) if stored.get("format") == FORMAT else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _write_watermark(self, seq: int, rowid: int) -> None:
        tmp = self.path / "watermark.json.tmp"
        with open(tmp, "w") as f:
            f.write(json.dumps({"seq": seq, "rowid": rowid, "format": FORMAT}))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path / "watermark.json")
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _committed(self, seq: int, rowid: int) -> None:
        """After a commit (ours or another process's): read it, and remember what it holds."""
        with self._lock:  # a search reads the three together (`lagging` holds it throughout)
            self._index.reload()  # type: ignore[union-attr]
            self._searcher = self._index.searcher()  # type: ignore[union-attr]
            self.watermark, self.max_rowid = seq, rowid

    @staticmethod
    def _schema_of():
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_unsigned_field("rowid", stored=False, indexed=True, fast=True)
        sb.add_text_field("words", stored=False, tokenizer_name="whitespace", index_option="freq")  # the strict leg's
        # the FTS row's stems and its neighbours' context, each scored by tantivy's BM25 to
        # choose candidates; `terms` holds both only for FTS5's document frequencies
        sb.add_text_field("stems", stored=False, tokenizer_name="whitespace", index_option="freq")
        sb.add_text_field("context", stored=False, tokenizer_name="whitespace", index_option="freq")
        sb.add_text_field("terms", stored=False, tokenizer_name="whitespace", index_option="basic")
        return sb.build()

    def _open(self) -> bool:
        import tantivy

        try:
            # newest first within a segment: of equal scores tantivy keeps the lowest document
            # ids, and FTS5's order keeps the newest rows
            self._index = tantivy.Index(
                self._schema_of(), path=str(self.path), reuse=True, sort_by_field="rowid", sort_order=tantivy.Order.Desc
            )
            self._schema = self._index.schema
            self._index.reload()
            self._searcher = self._index.searcher()
            return True
        except (OSError, ValueError):
            self._index = self._searcher = None
            return False

    def _writer(self):
        """The index's writer, or None while another process holds it."""
        try:
            return self._index.writer(heap_size=16_000_000, num_threads=1)  # type: ignore[union-attr]
        except (OSError, ValueError, RuntimeError):
            return None

    def _document(self, rowid: int, words: str, stems: str, context: str):
        import tantivy

        doc = tantivy.Document()
        doc.add_unsigned("rowid", rowid)
        doc.add_text("words", words)
        doc.add_text("stems", stems)
        doc.add_text("context", context)
        doc.add_text("terms", f"{stems} {context}")
        return doc

    def _build(self, conn: sqlite3.Connection) -> bool:
        """A new index from every full-text row (the old folder removed first)."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True)
        if not self._open():
            return False
        writer = self._writer()
        if writer is None:
            return False
        conn.execute("BEGIN")  # one snapshot: the rows and the change they include
        try:
            seq = conn.execute("SELECT coalesce(max(seq), 0) FROM text_changes").fetchone()[0]
            top = 0
            for rowid, words, stems, context in conn.execute("SELECT id, c0, c1, c2 FROM memories_fts_content"):
                writer.add_document(self._document(rowid, words or "", stems or "", context or ""))
                top = max(top, rowid)
        finally:
            conn.execute("COMMIT")
        writer.commit()
        writer.wait_merging_threads()
        self._write_watermark(seq, top)
        self._committed(seq, top)
        return True

    def _changed(self, conn: sqlite3.Connection, seq: int, rowid: int, upto: int | None = None) -> list[int]:
        """Rows changed after change `seq` (up to `upto`) or added after row `rowid`."""
        logged = conn.execute(
            "SELECT DISTINCT rowid FROM text_changes WHERE seq > ? AND seq <= ?", (seq, upto if upto is not None else 2**62)
        )
        added = conn.execute("SELECT id FROM memories_fts_content WHERE id > ?", (rowid,))
        return list(dict.fromkeys([r[0] for r in logged] + [r[0] for r in added]))

    def _catch_up(self, conn: sqlite3.Connection, upto: int) -> None:
        """Apply the changes past the watermark (each row as it is now) and commit."""
        import tantivy

        writer = self._writer()
        if writer is None:
            return  # another process is catching up; its commit is read next time
        stored = self._read_watermark()  # maybe moved by another process since we looked
        seq, top = max((self.watermark, self.max_rowid), stored or (-1, 0))
        newest = conn.execute("SELECT coalesce(max(id), 0) FROM memories_fts_content").fetchone()[0]
        rowids = self._changed(conn, seq, top, upto)
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            # by query: tantivy-py's delete by term does not match an unsigned field's terms
            writer.delete_documents_by_query(tantivy.Query.term_set_query(self._schema, "rowid", chunk))
            for rowid, texts in _texts(conn, chunk).items():
                writer.add_document(self._document(rowid, *texts))
        writer.commit()
        writer.wait_merging_threads()
        top = max(top, newest)
        self._write_watermark(upto, top)
        self._publish(upto, top)

    def _publish(self, seq: int, rowid: int) -> None:
        """Read our new commit now. A search holds `_lock` only briefly, unless it waits for
        the file lock this catch-up holds (to rebuild an outrun index): then this gives up
        after `PUBLISH_WAIT` seconds and the next search reads the commit from the watermark."""
        if self._lock.acquire(timeout=PUBLISH_WAIT):
            try:
                self._committed(seq, rowid)
            finally:
                self._lock.release()

    def lagging(self, conn: sqlite3.Connection) -> list[int] | None:
        """Open (or build) the index and catch it up if it is `LAG` changes behind; the
        rowids changed since its commit, to be scored from SQLite; None if it cannot be
        used now (tantivy missing, or rebuilt by another process)."""
        with self._lock:
            if self._missing:
                return None
            try:
                return self._lagging(conn)
            except ImportError:  # tantivy not installed (a layer without the `local` extra)
                self._missing = True
                return None

    @contextmanager
    def _exclusive(self, wait: bool = True):
        """Between processes: one builds or catches up the index at a time. Yields whether
        the lock is held (`wait` False: not when another process holds it)."""
        import fcntl  # POSIX; imported here so the store module itself imports anywhere

        with open(self.path.with_name(self.path.name + ".lock"), "a") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _catch_up_later(self, upto: int) -> None:
        """Start catching the index up to change `upto` in a background thread, unless one
        runs (or one could not start a moment ago). The caller holds `_lock`."""
        if (self._catching is not None and self._catching.is_alive()) or time.monotonic() - self._tried_at < RETRY_SECONDS:
            return
        self._tried_at = time.monotonic()
        self._catching = threading.Thread(target=self._catch_up_alone, args=(upto,), name="xmemo-text-index", daemon=True)
        self._catching.start()

    def _catch_up_alone(self, upto: int) -> None:
        """One catch-up, on a connection of its own, if no other process is catching up
        (its commit is read by the next search). A failure leaves the index as it was:
        behind, which every search already allows for; the next search past `LAG` retries."""
        try:
            conn = sqlite3.connect(str(self._database), timeout=5)
        except sqlite3.Error:
            return
        try:
            with self._exclusive(wait=False) as mine:
                if mine:
                    self._catch_up(conn, upto)
                    self._tried_at = -RETRY_SECONDS  # done: the next lag may start one at once
        except (sqlite3.Error, OSError, ValueError, RuntimeError) as exc:
            # searches stay exact (they score the lagging rows); say why the index stays behind
            log.warning("text index catch-up failed, retried by a later search: %s", type(exc).__name__)
        finally:
            conn.close()

    def wait(self) -> None:
        """Until the background catch-up (if one runs) is done: before the store closes."""
        catching = self._catching
        if catching is not None:
            catching.join()

    def _lagging(self, conn: sqlite3.Connection) -> list[int] | None:
        stored = self._read_watermark()
        if self._index is None:
            import tantivy  # noqa: F401  (before any file is made: without it, FTS5 answers)

            with self._exclusive():
                stored = self._read_watermark()
                if stored is None or not self._open():
                    if not self._build(conn):
                        return None
                else:
                    self._committed(*stored)
        elif stored is not None and stored[0] > self.watermark:  # another process committed
            self._committed(*stored)
        first, last = conn.execute("SELECT min(seq), coalesce(max(seq), 0) FROM text_changes").fetchone()
        if first is not None and first > self.watermark + 1:  # outrun: its changes were trimmed
            with self._exclusive():
                if not self._build(conn):
                    return None
            last = conn.execute("SELECT coalesce(max(seq), 0) FROM text_changes").fetchone()[0]
        lag = self._changed(conn, self.watermark, self.max_rowid)
        if len(lag) >= LAG or last - self.watermark >= LAG:
            self._catch_up_later(last)  # this search scores the lagging rows meanwhile
        return Lag(lag, (self._searcher, last))



    # -- searching -------------------------------------------------------------------------
    def candidates(self, terms: list[str], limit: int, context_weight: float, strict: bool = False) -> list[int]:
        """Up to `limit` rowids by tantivy's BM25 (any term, on stems and on context
        weighted by `context_weight`; `strict`: every term, on words), best first. Each term
        is boosted by FTS5's IDF over tantivy's (ln((N-n+½)/(n+½)), n in either column
        (strict: in words), against ln(1+(N-n+½)/(n+½)), n in the field), so a common term
        weighs as little as in FTS5; a boost keeps block-max WAND."""
        import tantivy

        with self._lock:
            searcher, schema = self._searcher, self._schema
        if searcher is None or not terms:
            return []
        rows = searcher.num_docs
        clauses = []
        if strict:
            for t in terms:
                n = searcher.doc_freq("words", t)
                if n == 0:
                    return []  # no row holds every term
                boost = _idf(rows, n) / math.log1p((rows - n + 0.5) / (n + 0.5))
                clauses.append((tantivy.Occur.Must, tantivy.Query.boost_query(tantivy.Query.term_query(schema, "words", t), boost)))
            hits = searcher.search(tantivy.Query.boolean_query(clauses), limit=limit, count=False).hits
            return [int(r) for r in searcher.fast_field_values("rowid", [a for _, a in hits])]
        for t in terms:
            n = searcher.doc_freq("terms", t)
            if n == 0:
                continue
            fts5 = _idf(rows, n)
            for field, weight in (("stems", 1.0), ("context", context_weight)):
                own = searcher.doc_freq(field, t)
                if own and weight > 0:
                    boost = weight * fts5 / math.log1p((rows - own + 0.5) / (own + 0.5))
                    clauses.append((tantivy.Occur.Should, tantivy.Query.boost_query(tantivy.Query.term_query(schema, field, t), boost)))
        if not clauses:
            return []
        query = tantivy.Query.boolean_query(clauses)
        hits = searcher.search(query, limit=limit, count=False).hits
        return [int(r) for r in searcher.fast_field_values("rowid", [a for _, a in hits])]

    def doc_freqs(self, conn: sqlite3.Connection, terms: list[str], lag: list[int], field: str = "terms") -> dict[str, int]:
        """Rows whose stems or context (`field` "words": whose words) hold each term now: the
        index's live rows with it, less the lagging rows it held at its commit, plus the
        lagging rows that hold it in SQLite (tantivy's own `doc_freq` still counts deleted
        documents)."""
        import tantivy

        with self._lock:
            searcher, schema = self._searcher, self._schema
            counted, counts = self._counts
            if counted is not searcher or len(counts) > COUNTED_TERMS:
                counts = {}
                self._counts = (searcher, counts)
        if searcher is None:
            return dict.fromkeys(terms, 0)
        for t in terms:
            if (field, t) not in counts:
                counts[(field, t)] = searcher.search(tantivy.Query.term_query(schema, field, t), limit=1).count
        out = {t: counts[(field, t)] for t in terms}
        if lag:
            for t in terms:
                out[t] += self._lag_shift(conn, searcher, schema, lag, field, t)
        return out

    def _lag_shift(self, conn: sqlite3.Connection, searcher, schema, lag: list[int], field: str, term: str) -> int:
        """How far the lagging rows move `term`'s count in `field`: those that hold it in
        SQLite now, less those the index's commit held it in. Kept while `lag` is the same
        (`Lag.state`: the searcher and the last change), for `COUNTED_TERMS` terms."""
        import tantivy

        state = getattr(lag, "state", None)
        key = (state[1], tuple(lag)) if state is not None and state[0] is searcher else None  # None: not kept
        with self._lock:
            held_key = self._lag_kept[0]
            same = key is not None and held_key is not None and held_key[0] is searcher and held_key[1] == key
            kept = self._lag_kept if same else None
            if kept is None and key is not None:
                self._lag_kept = kept = ((searcher, key), {}, {})
        now = kept[1].get(field) if kept is not None else None
        if now is None:
            columns = ("words",) if field == "words" else ("stems", "context")
            now = [set(" ".join(texts).split()) for texts in _texts(conn, lag, columns).values()]
            if kept is not None:
                kept[1][field] = now
        if kept is not None and (field, term) in kept[2]:
            return kept[2][(field, term)]
        held = tantivy.Query.term_set_query(schema, "rowid", lag)
        had = searcher.search(tantivy.Query.boolean_query([(tantivy.Occur.Must, tantivy.Query.term_query(schema, field, term)), (tantivy.Occur.Must, held)]), limit=1).count
        shift = sum(term in words for words in now) - had
        if kept is not None and len(kept[2]) < COUNTED_TERMS:
            kept[2][(field, term)] = shift
        return shift


_COLUMNS = {"words": "c0", "stems": "c1", "context": "c2"}  # the FTS5 content table's columns


def _texts(conn: sqlite3.Connection, rowids: list[int], columns: tuple[str, ...] = ("words", "stems", "context")) -> dict[int, tuple[str, ...]]:
    """The `columns` (words, stems, context) of these full-text rows (those that still
    exist). Only those asked for are read: a context column is often the largest, and the
    strict leg reads words alone."""
    out = {}
    wanted = ", ".join(_COLUMNS[c] for c in columns)
    for start in range(0, len(rowids), 500):
        chunk = rowids[start : start + 500]
        for rowid, *texts in conn.execute(
            f"SELECT id, {wanted} FROM memories_fts_content WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ):
            out[rowid] = tuple(t or "" for t in texts)
    return out


def _length(docsize: bytes) -> int:
    """A row's tokens in every column, from its FTS5 docsize record (one varint a column):
    a record of bytes below 0x80 holds one-byte varints, whose values are those bytes."""
    return sum(docsize) if max(docsize, default=0) < 0x80 else sum(_varints(docsize))


class Statistics:
    """How FTS5's `bm25(memories_fts, 1, 1, context_weight)` scores rows for one query (an
    any-term query on `stems` and `context`; `strict`: every term, on `words`), negated so
    higher is better: FTS5's row count and mean length (its averages record; a row's length
    counts every column, as FTS5's does) and each term's IDF (the index's document
    frequencies, corrected for the rows it lags behind). Read once per query, so a search
    that widens scores each new round's rows without reading them again."""

    def __init__(self, terms: list[str], idf: dict[str, float], avgdl: float, strict: bool):
        self.terms, self.idf, self.avgdl, self.strict = terms, idf, avgdl, strict
        self._known: dict[tuple, float] = {}  # (texts, docsize) -> score, across a search's rounds

    @classmethod
    def read(cls, conn: sqlite3.Connection, index: TextIndex, terms: list[str], lag: list[int], strict: bool) -> "Statistics | None":
        """None when FTS5 holds no rows (nothing scores)."""
        averages = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
        if averages is None:
            return None
        counts = _varints(averages[0])
        rows, avgdl = counts[0], sum(counts[1:]) / max(1, counts[0])
        if rows == 0 or avgdl == 0:
            return None
        idf = {t: _idf(rows, n) for t, n in index.doc_freqs(conn, terms, lag, "words" if strict else "terms").items()}
        return cls(terms, idf, avgdl, strict)

    @property
    def columns(self) -> tuple[str, ...]:
        """The full-text columns this query scores."""
        return ("words",) if self.strict else ("stems", "context")

    def visible_scores(
        self, conn: sqlite3.Connection, rowids: list[int], where: str, params: list, context_weight: float
    ) -> tuple[dict[int, Any], dict[int, float]]:
        """Of `rowids`, those `where` (a filter on `memories m`) lets the caller see, with their
        creation times, and the scores of those that match: the rows, their lengths and their
        texts read in one statement, not three (a tied strict search at 1M read up to 640 rows:
        bench-out/latency/strict-join/)."""
        if not rowids:
            return {}, {}
        wanted = ", ".join(f"t.{_COLUMNS[c]}" for c in self.columns)
        created: dict[int, Any] = {}
        rows = []
        cursor = conn.cursor()
        cursor.row_factory = None  # plain tuples, not the store's named rows: a tie reads hundreds
        for rowid, at, size, held, *texts in cursor.execute(
            f"SELECT m.rowid, m.created_at, d.sz, t.id, {wanted} FROM memories m NOT INDEXED "
            f"LEFT JOIN memories_fts_docsize d ON d.id = m.rowid LEFT JOIN memories_fts_content t ON t.id = m.rowid "
            f"WHERE {where} AND m.rowid IN ({','.join('?' * len(rowids))})",
            [*params, *rowids],
        ):
            created[rowid] = at
            if held is not None:  # a row FTS5 holds (as `_texts` reads them)
                rows.append((rowid, tuple(texts), size))
        return created, self._scored(rows, context_weight)

    def _scored(self, rows: Iterable[tuple[int, tuple[str | None, ...], bytes | None]], context_weight: float) -> dict[int, float]:
        """The scores of `rows` (rowid, texts, FTS5 docsize record) that match. A row's score
        is a function of its texts and length alone, so rows alike in both are scored (and
        their length decoded) once in all of a search's rounds: the rows that widen a strict
        search are ties, and ties are mostly copies of one text (a note many holders keep,
        an agent writing the same line again)."""
        out: dict[int, float] = {}
        known = self._known
        score_of = self._strict_score if self.strict else self._any_term_score
        for rowid, texts, size in rows:
            key = (texts, size)
            score = known.get(key)
            if score is None:
                score = known[key] = score_of(tuple(t or "" for t in texts), _length(size or b""), context_weight)
            if score > 0:
                out[rowid] = score
        return out

    def _strict_score(self, texts: tuple[str, ...], length: int, context_weight: float) -> float:
        """`row_score` without context, inlined (the same operations in the same order: the
        same bits): a tie at 1M memories scored 640 rows, and the calls were a third of it.
        0 unless the words hold every term."""
        own = texts[0].split()
        counts = [own.count(t) for t in self.idf]
        if 0 in counts:  # not every term: no match
            return 0.0
        norm = K1 * (1 - B + B * length / self.avgdl)
        score = 0.0
        for weight, f in zip(self.idf.values(), counts):
            score += weight * (f * (K1 + 1.0)) / (f + norm)
        return score

    def _any_term_score(self, texts: tuple[str, ...], length: int, context_weight: float) -> float:
        stems, context = texts
        near = context.split() if context_weight > 0 else []
        return row_score(self.idf, stems.split(), near, length, self.avgdl, context_weight)
