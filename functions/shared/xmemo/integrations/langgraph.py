"""`XMemoStore`: LangGraph's long-term memory store (`BaseStore`) on XMemo.

LangGraph items are `(namespace, key) → JSON value`; XMemo memories are append-only
records with references the service assigns. The mapping:

- an item is one memory in bucket `langgraph` (configurable) whose content is the JSON
  envelope `{"namespace": [...], "key": ..., "value": {...}}` (so values round-trip as
  JSON, and two items with equal values never collapse into one duplicate), whose
  `location` is the namespace joined by `/`, and whose tags are a digest of every
  namespace prefix plus one of `(namespace, key)`: exact lookups are tag filters;
- a namespace label `team:<slug>` or `project:<slug>` puts the item in that boundary
  (`team:acme/project:orion`), and reads under it are narrowed to it (403 when the caller
  is not in the team, as everywhere in XMemo);
- `put` over an existing key writes the new value with `supersedes` (the old version is
  no longer returned); `put(value=None)` forgets every version of the key;
- `search` with a query is `recall` (ranked, typo-tolerant, at most 20 hits, so
  `offset + limit` ≤ 20); without one it lists, newest first; `filter` is applied to the
  values (`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`);
- `list_namespaces` reads the namespaces of every item the caller can see.

Operations run one after another, in batch order. Each is written once as a generator of
client calls, driven by `XMemo` in `batch` and by `AsyncXMemo` in `abatch`."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any, Generator, Iterable

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from ..client import AsyncXMemo, XMemo
from ..models import SLUG_PATTERN, Memory

BUCKET = "langgraph"
MAX_RECALL = 20  # SPEC §3: recall's limit bound
PAGE = 100  # list_memories' largest page
MAX_DEPTH = 15  # one tag per namespace prefix, plus the key's: XMemo allows 16 tags
_SLUG = re.compile(SLUG_PATTERN)
Calls = Generator[tuple[str, dict[str, Any]], Any, Any]


# ---------------------------------------------------------------------------------------
# the mapping, pure
def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:24]


def namespace_tag(prefix: tuple[str, ...]) -> str:
    return f"ns-{_digest(*prefix)}"


def key_tag(namespace: tuple[str, ...], key: str) -> str:
    return f"key-{_digest(list(namespace), key)}"


def boundary_of(namespace: tuple[str, ...]) -> dict[str, str]:
    """`team` / `project` named by labels `team:<slug>` / `project:<slug>` (first of each)."""
    out: dict[str, str] = {}
    for label in namespace:
        kind, _, slug = label.partition(":")
        if kind in ("team", "project") and kind not in out and _SLUG.match(slug):
            out[kind] = slug
    return out


def location_of(namespace: tuple[str, ...]) -> str:
    """The namespace as a readable path (`/` and `|` escaped); the envelope is authoritative."""
    labels = [label.replace("%", "%25").replace("/", "%2F").replace("|", "%7C") for label in namespace]
    path = "/".join(labels).strip()
    return re.sub(r"[\x00-\x1f]", "", path)[:256] or BUCKET


def envelope(namespace: tuple[str, ...], key: str, value: Any) -> str:
    return json.dumps({"namespace": list(namespace), "key": key, "value": value}, ensure_ascii=False)


def unwrap(memory: Memory) -> tuple[tuple[str, ...], str, dict[str, Any]] | None:
    """(namespace, key, value) of a memory written by this store, else None."""
    try:
        data = json.loads(memory.content)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("key"), str) or not isinstance(data.get("namespace"), list):
        return None
    return tuple(str(x) for x in data["namespace"]), data["key"], data.get("value")


def _item(memory: Memory, score: float | None = None, cls: type = Item) -> Item | None:
    parts = unwrap(memory)
    if parts is None:
        return None
    namespace, key, value = parts
    when = memory.created_at
    if cls is SearchItem:
        return SearchItem(namespace=namespace, key=key, value=value, created_at=when, updated_at=when, score=score)
    return Item(namespace=namespace, key=key, value=value, created_at=when, updated_at=when)


_OPS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def matches(value: Any, filter: dict[str, Any] | None) -> bool:
    """LangGraph's value filter: exact values (nested dicts recurse) or `$op` comparisons."""
    for field, wanted in (filter or {}).items():
        if not isinstance(value, dict) or field not in value:
            return False
        actual = value[field]
        if isinstance(wanted, dict) and wanted and all(k in _OPS for k in wanted):
            try:
                if not all(_OPS[op](actual, operand) for op, operand in wanted.items()):
                    return False
            except TypeError:
                return False
        elif isinstance(wanted, dict) and isinstance(actual, dict):
            if not matches(actual, wanted):
                return False
        elif actual != wanted:
            return False
    return True


def _fits(namespace: tuple[str, ...], condition: MatchCondition) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(p == "*" or p == n for p, n in zip(path, part))


# ---------------------------------------------------------------------------------------
class XMemoStore(BaseStore):
    """A LangGraph `BaseStore` over XMemo's REST API (see the module docstring).

    Pass a client, an async client, or both; with neither, both are built from `connect`
    (the `XMemo` arguments: url, token, client_id/client_secret, ...). `batch` needs the
    sync client; `abatch` uses the async one, else runs `batch` in a thread."""

    __slots__ = ("client", "aclient", "bucket", "memory_type")

    def __init__(
        self,
        client: XMemo | None = None,
        aclient: AsyncXMemo | None = None,
        *,
        bucket: str = BUCKET,
        memory_type: str = "note",
        **connect: Any,
    ):
        if client is None and aclient is None:
            client, aclient = XMemo(**connect), AsyncXMemo(**connect)
        self.client, self.aclient = client, aclient
        self.bucket, self.memory_type = bucket, memory_type

    # -- drivers -------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:
            raise RuntimeError("XMemoStore was given only an AsyncXMemo: use the async methods")
        results = []
        for op in ops:
            steps, value = self._steps(op), None
            while True:
                try:
                    name, kwargs = steps.send(value)
                except StopIteration as done:
                    results.append(done.value)
                    break
                value = getattr(self.client, name)(**kwargs)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.aclient is None:
            return await asyncio.to_thread(self.batch, list(ops))
        results = []
        for op in ops:
            steps, value = self._steps(op), None
            while True:
                try:
                    name, kwargs = steps.send(value)
                except StopIteration as done:
                    results.append(done.value)
                    break
                value = await getattr(self.aclient, name)(**kwargs)
        return results

    def _steps(self, op: Op) -> Calls:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown operation {type(op).__name__}")

    # -- operations, as generators of client calls ---------------------------------------
    def _filters(self, namespace: tuple[str, ...]) -> dict[str, Any]:
        return {"bucket": self.bucket, **boundary_of(namespace)}

    def _current(self, namespace: tuple[str, ...], key: str) -> Calls:
        page = yield "list_page", {"limit": 1, "tags": [key_tag(namespace, key)], **self._filters(namespace)}
        return page.memories[0] if page.memories else None

    def _get(self, op: GetOp) -> Calls:
        memory = yield from self._current(op.namespace, op.key)
        return _item(memory) if memory is not None else None

    def _put(self, op: PutOp) -> Calls:
        namespace = tuple(op.namespace)
        if not namespace or len(namespace) > MAX_DEPTH:
            raise InvalidNamespaceError(f"XMemoStore namespaces have 1 to {MAX_DEPTH} labels, got {len(namespace)}")
        current = yield from self._current(namespace, op.key)
        if op.value is None:
            if current is not None:
                yield "forget", {"tags": [key_tag(namespace, op.key)], **self._filters(namespace)}
            return None
        content = envelope(namespace, op.key, dict(op.value))
        if current is not None and current.content == content:
            return None  # unchanged: nothing to write
        tags = [namespace_tag(namespace[:n]) for n in range(1, len(namespace) + 1)] + [key_tag(namespace, op.key)]
        yield "remember", {
            "content": content,
            "type": self.memory_type,
            "location": location_of(namespace),
            "tags": tags,
            "supersedes": current.reference if current is not None else None,
            **self._filters(namespace),
        }
        return None

    def _search(self, op: SearchOp) -> Calls:
        prefix = tuple(op.namespace_prefix)
        filters = self._filters(prefix)
        if prefix:
            filters["tags"] = [namespace_tag(prefix)]
        wanted = op.offset + op.limit
        found: list[Item] = []
        if op.query:
            if wanted > MAX_RECALL:
                raise ValueError(f"XMemoStore.search with a query returns at most {MAX_RECALL} items (offset + limit)")
            hits = yield "recall", {"query": op.query, "limit": MAX_RECALL if op.filter else max(1, wanted), **filters}
            for hit in hits.results:
                item = _item(hit, hit.score, SearchItem)
                if item is not None and matches(item.value, op.filter):
                    found.append(item)
        else:
            cursor = None
            while len(found) < wanted:
                page = yield "list_page", {"limit": PAGE, "cursor": cursor, **filters}
                for memory in page.memories:
                    item = _item(memory, None, SearchItem)
                    if item is not None and matches(item.value, op.filter):
                        found.append(item)
                cursor = page.next_cursor
                if not cursor:
                    break
        return found[op.offset : wanted]

    def _list_namespaces(self, op: ListNamespacesOp) -> Calls:
        seen: set[tuple[str, ...]] = set()
        cursor = None
        while True:
            page = yield "list_page", {"limit": PAGE, "cursor": cursor, "bucket": self.bucket}
            for memory in page.memories:
                parts = unwrap(memory)
                if parts is None:
                    continue
                namespace = parts[0]
                if all(_fits(namespace, c) for c in op.match_conditions or ()):
                    seen.add(namespace[: op.max_depth] if op.max_depth is not None else namespace)
            cursor = page.next_cursor
            if not cursor:
                break
        return sorted(seen)[op.offset : op.offset + op.limit]
