"""The store rules both stores share, written once: which fields a memory's record holds
and how each kind of value is kept, the duplicate key and when a duplicate gives way,
the text lexical search sees, and the list cursor's encoding.

The stored fields are read from the `Memory` model itself, so a new field of a kind
already here (text, number, time, flag, list, object) is stored and read back by both
stores without an edit in this module or in their conversion code. Adding a field to
`Memory` takes three edits: the field in `models.Memory`, its column in
`store.sqlite.SCHEMA` (a file written before it gains the column when opened), and its
property in `store.opensearch.index.mappings` (with `MAPPING_VERSION` bumped, so that
`xmemo opensearch migrate` moves the data to the new mapping). Tests fail when one is
missing (`tests/unit/test_records.py`) or a field does not round-trip through both
stores (`tests/contract/test_record_round_trip.py`)."""

from __future__ import annotations

import base64
import json
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from pydantic import BaseModel

from .. import text
from ..errors import InvalidRequest
from ..models import Memory

TEXT, NUMBER, TIME, FLAG, LIST, OBJECT = "text", "number", "time", "flag", "list", "object"


def _kind(annotation: Any) -> str:
    """The kind of a `Memory` field, from its annotation (`X | None` counts as `X`)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if annotation is datetime:
        return TIME
    if annotation is bool:
        return FLAG
    if annotation in (int, float):
        return NUMBER
    if typing.get_origin(annotation) in (tuple, list):
        return LIST
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return OBJECT
    return TEXT


# Every field a record stores, with its kind. The embedding and token states are not among
# them: each store keeps them its own way (BLOBs beside the row, a `knn_vector` field).
DERIVED = ("embedding", "token_states")
FIELDS: dict[str, str] = {name: _kind(f.annotation) for name, f in Memory.model_fields.items() if name not in DERIVED}
# `holder` is derived from owner and team, and stored too: every visibility filter reads it.
STORED: tuple[str, ...] = ("holder", *FIELDS)


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Codec:
    """How one store keeps each kind of value: `put` on the way in, `take` on the way out.
    A kind not named is kept as it is; None is always kept as None (or left out)."""

    put: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    take: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)


def to_record(memory: Memory, codec: Codec) -> dict[str, Any]:
    """The stored values of `memory` (every name of `STORED`), encoded by `codec`."""
    record: dict[str, Any] = {"holder": memory.holder}
    for name, kind in FIELDS.items():
        value = getattr(memory, name)
        record[name] = None if value is None else codec.put.get(kind, _same)(value)
    return record


def from_record(record: Mapping[str, Any], codec: Codec) -> Memory:
    """The memory a record holds; a field absent or None takes the model's default."""
    values = {}
    for name, kind in FIELDS.items():
        value = record.get(name)
        if value is not None:
            values[name] = codec.take.get(kind, _same)(value)
    return Memory(**values)


def row_reader(names: Sequence[str], codec: Codec) -> Callable[[Sequence[Any]], Memory]:
    """`from_record` for rows whose values come in `names`' order (values past them, such
    as a score, ignored): which field each value is and how to decode it is worked out
    once, so a search that reads 300 rows pays only their decoding (a third less than
    `from_record`'s lookups by name)."""
    plan = [(i, name, codec.take.get(FIELDS[name], _same)) for i, name in enumerate(names) if name in FIELDS]

    def read(row: Sequence[Any]) -> Memory:
        values = {}
        for i, name, take in plan:
            value = row[i]
            if value is not None:
                values[name] = take(value)
        return Memory(**values)

    return read


# -- duplicates ----------------------------------------------------------------------------
# Same holder, boundary, bucket, temporariness and content: one live memory at most. The
# holder is part of it because the boundary string alone is ambiguous (an owner named
# `ann/project:x` has the boundary of ann's project x), and a duplicate answer returns the
# existing memory, so it must be one the writer can see.
DUPLICATE_KEY: tuple[str, ...] = ("holder", "boundary", "bucket", "temporary", "content_sha256")


def duplicate_key(memory: Memory) -> tuple[Any, ...]:
    return tuple(getattr(memory, name) for name in DUPLICATE_KEY)


def is_duplicate(existing: Memory, new: Memory) -> bool:
    """Whether `existing`, which has `new`'s duplicate key, makes `new` a duplicate: it does
    while it is live when `new` is written. A superseded or expired one is replaced."""
    return existing.superseded_by is None and (existing.expires_at is None or existing.expires_at > new.created_at)


# -- search text ---------------------------------------------------------------------------
def search_text(memory: Memory) -> str:
    """What lexical search sees: title, location, tags and content."""
    return "\n".join(filter(None, [memory.title, memory.location, " ".join(memory.tags), memory.content]))


def terms_text(texts: Sequence[str]) -> str:
    """The tolerant leg's indexed terms of `texts`, space-separated: `text.stems` (English
    Snowball stems, CJK bigrams), as the SQLite store's `stems` and `context` columns hold
    them. The OpenSearch store indexes them with a whitespace analyzer, so both stores
    search the same terms whatever stemmer the cluster ships."""
    return " ".join(" ".join(text.stems(t)) for t in texts if t)


def words_text(texts: Sequence[str]) -> str:
    """The strict leg's indexed words of `texts`, space-separated: `text.words` (folded
    words, CJK bigrams), as the SQLite store's `words` column holds them. The OpenSearch
    store indexes them with a whitespace analyzer, so `search_memory` needs the same words
    in both stores (a cluster's standard tokenizer keeps `caroline's`, `3.5` and `u.s.a`
    whole, where the SQLite store has `caroline s`, `3 5` and `u s a`)."""
    return " ".join(" ".join(text.words(t)) for t in texts if t)


def ranked_terms(own: str, context: str, context_weight: float) -> str:
    """The one field the OpenSearch store ranks the tolerant leg by: the memory's terms
    and its neighbours' (`terms_text`), repeated in the ratio of their weights. One field
    because the SQLite store's BM25 scores a row, not a column: a term's count is
    `stems + context_weight x context` and the length is the whole row's (words, stems,
    context), and BM25 over one field of `own` twice and `context` once has exactly that
    count (doubled) and that length at the default weight 0.5. Per-field BM25 summed over
    two fields ranks differently (LoCoMo: `python -m research bm25-formulas`).
    Other weights: `own` round(1/weight) times (weight <= 1) or `context` round(weight)
    times, with or without neighbours, so every document is weighted alike; 0 leaves the
    context out."""
    copies, times = ranked_copies(context_weight)
    return " ".join(filter(None, [own] * copies + [context] * times))


def row_length(words: str, own: str, context: str) -> int:
    """The length FTS5's `bm25()` gives the SQLite store's row of a memory: the tokens of
    its `words`, `stems` (`own`) and `context` columns together (space-separated terms,
    one token each). The OpenSearch store keeps it in every document (`length`, mapping v5);
    its read path does not use it (the cluster ranks with its own BM25)."""
    return len(words.split()) + len(own.split()) + len(context.split())


def ranked_copies(context_weight: float) -> tuple[int, int]:
    """How many times `ranked_terms` repeats a memory's own terms and its context."""
    if context_weight <= 0:
        return 2, 0
    if context_weight <= 1:
        return max(1, round(1 / context_weight)), 1
    return 1, round(context_weight)


# -- neighbouring context -----------------------------------------------------------------
# A memory's context is the content of the memories just before and just after it (by
# `created_at`, then reference or row order) in its group: same holder (so it is only ever
# read by callers who may read the neighbours), same location (one conversation, one
# document) and same temporariness (a temporary memory's words must never make a permanent
# one findable by a caller without the temporary scope). Only the tolerant query reads it.
# One neighbour per side.
CONTEXT_GROUP: tuple[str, ...] = ("holder", "location", "temporary")


# The first segment of a location that says its memories are the turns of a conversation, as
# the writer states it (`chat/2026-03-02`, `conversations/support/4711`). Notes kept in one
# place (`repos/billing-api`, `meetings/product-weekly`) are usually unrelated to the notes
# written just before and after them; a conversation's turns answer each other. So only a
# conversation's memories take their neighbours' words as context and share their group's
# best score (`retrieval.boost_groups`). The location is in every candidate both stores give
# (`store.opensearch.queries.CANDIDATE_FIELDS`), so the rule needs no content.
CONVERSATION_KINDS = frozenset(
    {"chat", "chats", "conversation", "conversations", "dialog", "dialogs", "dialogue", "dialogues", "transcript", "transcripts"}
)


def is_conversation(location: str) -> bool:
    """Whether `location` says its memories are a conversation (`CONVERSATION_KINDS`)."""
    first = location.split("/", 1)[0].strip().lower()
    return first in CONVERSATION_KINDS


def has_context(location: str, bucket: str) -> bool:
    """Only a conversation's location groups memories (`is_conversation`): the default
    location is just the bucket, and notes kept in one place are unrelated notes."""
    return location != bucket and is_conversation(location)


def context_group(memory: Memory) -> tuple[Any, ...] | None:
    """The group whose order gives `memory` its neighbours (None: it has no context)."""
    if not has_context(memory.location, memory.bucket):
        return None
    return tuple(getattr(memory, name) for name in CONTEXT_GROUP)


def context_text(neighbours: Sequence[str]) -> str:
    """The context field's text: the terms of the neighbours' contents, the one before first."""
    return terms_text(neighbours)


# -- list cursors --------------------------------------------------------------------------
def encode_cursor(values: Sequence[Any]) -> str:
    """The sort values of a page's last memory as an opaque URL-safe token."""
    return base64.urlsafe_b64encode(json.dumps(list(values)).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, *shape: type) -> list[Any]:
    """The values `encode_cursor` wrote, one per type of `shape`; anything else (a cursor
    this service did not issue) is `400 invalid_request`."""
    try:
        values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(values, list) or len(values) != len(shape):
            raise ValueError
        return [_as(kind, value) for kind, value in zip(shape, values)]
    except Exception:
        raise InvalidRequest("cursor is not one this service issued") from None


def _as(kind: type, value: Any) -> Any:
    if kind is str and not isinstance(value, str):
        raise ValueError
    return kind(value)
