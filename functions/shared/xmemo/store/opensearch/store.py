"""`OpenSearchStore`: the `MemoryStore` on OpenSearch (the AWS backend).

Writes are single-document and idempotent: a memory's `_id` is its duplicate slot (see
`queries.slot_id`) written with `op_type=create`, so a retried `remember` finds its own
document instead of writing a second one, and a memory is one document (never half of
one). Reads are one request each; `search` sends both legs in one `_msearch`. After a
write or a delete, the neighbouring context of the memories around it is rewritten
(`context`: one `_msearch` and one `_bulk` per batch)."""

from __future__ import annotations

import base64
import threading
from datetime import datetime, timedelta
from typing import Any, Sequence

from ...auth import ReadFilter
from ...config import BedrockSettings, OpenSearchSettings, Settings
from ...errors import StoreMismatch, StoreUnavailable
from ...models import Memory
from ...retrieval.profile import PROFILE
from .. import records
from ..base import Candidates, Hit
from . import context as ctx
from . import queries as q
from .client import Caller, log, make_client
from .manage import IndexPlan, alias_targets, init


STATES_PAGE = 1_000  # references per token-states search: well within `index.max_result_window`


class OpenSearchStore:
    """Thread-safe; one client (and its connection pool) per store, created on first use."""

    def __init__(
        self,
        settings: OpenSearchSettings,
        *,
        dimension: int | None = None,
        client: Any = None,
        caller: Caller | None = None,
        embedder: str | None = None,
        context_weight: float = PROFILE.settings.context_weight,
        digest: str | None = None,
    ):
        """`embedder`, `dimension`, `digest`: the vectors this process makes (`xmemo.pin`)."""
        self.settings = settings
        self.alias = settings.opensearch_alias
        self.dimension = dimension
        self.embedder = embedder if dimension else None
        self.digest = digest if dimension else None
        self.knn = settings.opensearch_knn and dimension is not None
        self.caller = caller or Caller.from_settings(settings)
        self.plan = IndexPlan(
            self.alias, dimension, settings.opensearch_knn_engine, settings.opensearch_service == "aoss", settings.opensearch_replicas,
            embedder=self.embedder, digest=self.digest, context_weight=float(context_weight),
        )
        self.context_weight = float(context_weight)
        self.context_on = True  # off when the index predates the `context` field (mapping v1) or `terms` (v2)
        self.ranked = True  # off when the index predates the ranked `terms` field (mapping v3)
        self.worded = True  # off when the index predates the strict `words` field (mapping v4)
        self.lengths = True  # off when the index predates the row `length` (mapping v5): not written then
        self.packed = True  # off when the index predates `vector_bytes` (mapping v6): no hub discount
        self.stated = True  # off when the index predates `token_states` (mapping v7): no late-interaction leg
        self._refresh = None if settings.opensearch_refresh == "false" else settings.opensearch_refresh
        self._client = client
        self._ready = False
        self._lock = threading.RLock()
        self.semantic_off: str | None = None  # why the k-NN leg is off although an embedder is set
        self.refused: str | None = None  # why the index may not be used: it holds another embedder's vectors

    @classmethod
    def from_settings(cls, settings: Settings) -> "OpenSearchStore":
        """No I/O here: the client is created and the index checked on first use."""
        from ...pin import current_pin

        pin = current_pin(settings.embedder, settings.part(BedrockSettings))
        return cls(
            settings.part(OpenSearchSettings),
            dimension=pin.dimension,
            embedder=pin.embedder if pin.vectors else None,
            digest=pin.digest,
            context_weight=settings.context_weight,
        )

    # -- plumbing ------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = make_client(self.settings)
        return self._client

    def _call(self, op: str, fn, deadline: float | None = None):
        if not self._ready:
            self._ensure_index(deadline)
        if self.refused:
            raise StoreMismatch(self.refused)
        return self.caller(op, fn, deadline)

    def _ensure_index(self, deadline: float | None) -> None:
        """Once per process: the alias exists (created when `opensearch_auto_init`).
        Checking takes one request inside the operation's deadline; creating the index
        (first use of an empty cluster only) gets its own longer admin timeout."""
        with self._lock:
            if self._ready:
                return

            def check(timeout: float) -> None:
                if alias_targets(self.client, self.alias, timeout):
                    return
                if not self.settings.opensearch_auto_init:
                    raise StoreUnavailable(f"the OpenSearch alias {self.alias!r} does not exist; run `xmemo opensearch init`")
                init(self.client, self.plan)

            self.caller("ensure_index", check, deadline)
            self._ready = True
            self._detect_capability()

    def _detect_capability(self) -> None:
        """Once, when the store is first used, from the index mapping (and the plugin list):
        - an index without the `context` field (mapping v1) gets no context writes and no
          context query, with one warning naming `xmemo opensearch migrate`;
        - an index holding another embedder's vectors (another name, size or model file,
          `_check_pin`) is refused: every later call raises `StoreMismatch`;
        - a cluster without the k-NN plugin, or an index without a vector field, cannot run
          the semantic leg: the store runs lexical-only and says so (once in the log, and in
          every plan); no request fails.
        A plugin list that does not settle it (refused, timed out) leaves the leg on: `search`
        still turns the leg off if the cluster refuses a k-NN query."""
        from opensearchpy.exceptions import OpenSearchException

        timeout = min(self.caller.timeout_s, 2.0)
        try:
            mapping = next(iter(self.client.indices.get_mapping(index=self.alias, request_timeout=timeout).values()))
            mapping = mapping.get("mappings", {})
        except (OpenSearchException, OSError, StopIteration, ValueError, TypeError) as exc:
            log.info("index mapping not read (%s); context and the semantic leg stay on", type(exc).__name__)
            return
        props, meta = mapping.get("properties", {}), mapping.get("_meta") or {}
        version = meta.get("xmemo_mapping_version", "?")
        if "terms" not in props:
            self.ranked = self.context_on = False
            log.warning(
                "the index has no analysed-terms field (mapping v%s): recall runs with the cluster's stemmers and "
                "without neighbouring context, not as the embedded store ranks; run `xmemo opensearch migrate`", version,
            )
        elif "context" not in props:
            self.context_on = False
            log.warning(
                "the index has no neighbouring-context field (mapping v%s): recall runs without it; "
                "run `xmemo opensearch migrate`", version,
            )
        if "words" not in props:
            self.worded = False
            log.warning(
                "the index has no split-words field (mapping v%s): search_memory matches the cluster's tokens "
                "(`caroline's` is one), not the embedded store's words; run `xmemo opensearch migrate`", version,
            )
        if "embedding" in props and "vector_bytes" not in props:
            self.packed = False
            log.warning(
                "the index has no packed-vector field (mapping v%s): the semantic leg runs without the hub discount, "
                "not as the embedded store ranks; run `xmemo opensearch migrate`", version,
            )
        if "token_states" not in props:
            self.stated = False  # and no states search per recall on an index without vectors
        if "embedding" in props and "token_states" not in props:
            log.warning(
                "the index has no token-states field (mapping v%s): recall runs without the late-interaction leg, "
                "not as the embedded store ranks; run `xmemo opensearch migrate`", version,
            )
        if "length" not in props:
            self.lengths = False  # documents are written without it; ranking never reads it
        if not self.knn:
            return
        field = props.get("embedding")
        vectors = bool(field) and field.get("type") == "knn_vector"
        if vectors:  # settled by the mapping alone, whatever the plugin list says
            self._check_pin(int(field.get("dimension", 0)), meta, timeout)
            if self.refused:
                return
        reason = None
        try:
            if self.settings.opensearch_service == "es":  # Serverless has no _cat; its collections carry k-NN
                plugins = self.client.cat.plugins(format="json", request_timeout=timeout)
                if not any(p.get("component") == "opensearch-knn" for p in plugins or []):
                    reason = "the cluster has no k-NN plugin (opensearch-knn)"
        except (OpenSearchException, OSError, ValueError, TypeError) as exc:
            log.info("k-NN capability not settled (%s); the semantic leg stays on", type(exc).__name__)
            return
        if reason is None and not vectors:
            reason = "the index has no vector field (it was created without an embedder): run `xmemo opensearch migrate`"
        if reason:
            self._semantic_off(reason)

    def _check_pin(self, dimension: int, meta: dict[str, Any], timeout: float) -> None:
        """Refuse the index (every later call raises `StoreMismatch`) when its vectors are
        another embedder's than this process's: another name, dimension or model file
        (`xmemo.pin.mismatch`). An index that names no embedder (mapping v1, or one made
        without a name) or no model file (made before digests were recorded) is trusted on
        what it does name, and the digest and profile are recorded in its `_meta` (adopted)."""
        from ...pin import Pin, mismatch

        current = Pin(self.embedder or "unnamed", self.digest, self.dimension)
        named = meta.get("xmemo_embedder")
        recorded = Pin(
            current.embedder if named in (None, "unnamed") else named,
            meta.get("xmemo_embedder_digest", current.digest),
            dimension,
        )
        reason = mismatch(f"the OpenSearch index behind {self.alias!r}", recorded, current)
        if reason:
            self.refused = reason
            log.error("store refused: %s", reason)
        elif self.digest and "xmemo_embedder_digest" not in meta:
            self._adopt(meta, timeout)

    def _adopt(self, meta: dict[str, Any], timeout: float) -> None:
        """Record this embedder's digest and the profile in the `_meta` of an index made
        before they were recorded (its name and dimension matched). `_meta` is replaced
        whole, so the rest is sent again. A refusal only leaves the record for later."""
        from opensearchpy.exceptions import OpenSearchException

        from .index import profile_meta

        recorded = {**profile_meta(), **meta, "xmemo_embedder_digest": self.digest}
        try:
            self.client.indices.put_mapping(index=self.alias, body={"_meta": recorded}, request_timeout=timeout)
        except (OpenSearchException, OSError, ValueError, TypeError) as exc:
            log.info("embedder digest not recorded in the index (%s)", type(exc).__name__)

    def _semantic_off(self, reason: str) -> None:
        with self._lock:
            if self.knn:
                self.knn = False
                self.semantic_off = reason
                log.warning("semantic leg off: %s; recall runs lexical-only", reason)

    def _document(self, memory: Memory, deadline: float | None = None) -> dict[str, Any]:
        """The memory's document; without its vector when the semantic leg is off (an index
        without the vector field, or of another size, would refuse the write)."""
        if not self._ready:
            self._ensure_index(deadline)
        doc = self._known(q.to_document(memory, self.context_weight))
        if not self.knn:
            doc.pop("embedding", None)
            doc.pop("vector_bytes", None)
            doc.pop("token_states", None)
        return doc

    def _known(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`fields` less the derived ones the index's mapping lacks (`dynamic: strict` would
        refuse the write): `terms` before mapping v3, `words` before v4, `length` before v5,
        `vector_bytes` before v6, `token_states` before v7."""
        missing = {"terms": not self.ranked, "words": not self.worded, "length": not self.lengths, "vector_bytes": not self.packed,
                   "token_states": not self.stated}
        return {k: v for k, v in fields.items() if not missing.get(k)}

    def _params(self) -> dict[str, Any]:
        return {"refresh": self._refresh} if self._refresh else {}

    # -- writes --------------------------------------------------------------------------
    def insert(self, memory: Memory) -> tuple[Memory, bool]:
        from opensearchpy.exceptions import ConflictError

        deadline = self.caller.deadline()
        doc = self._document(memory, deadline)
        sid = q.slot_id(memory)
        for _ in range(4):
            try:
                self._call("create", lambda t: self.client.create(index=self.alias, id=sid, body=doc, request_timeout=t, **self._params()), deadline)
                break
            except ConflictError:
                pass
            got = self._get_by_id(sid, deadline)
            if got is None:  # deleted since the conflict: try the slot again
                continue
            existing = q.from_document(got["_source"])
            if existing.reference == memory.reference:  # our own earlier attempt landed
                break
            if records.is_duplicate(existing, memory):
                if memory.supersedes and existing.supersedes == memory.supersedes:
                    # a retry of a write whose supersede step was cut off: finish it
                    self._mark_superseded(existing.supersedes, existing.reference, existing.updated_at, deadline)
                return existing, True
            if existing.superseded_by is not None:
                self._retire(got, deadline)
            if self._replace(sid, doc, got, deadline):
                break
        else:
            raise StoreUnavailable("the memory store is busy with the same memory; retry")
        if memory.supersedes:
            self._mark_superseded(memory.supersedes, memory.reference, memory.created_at, deadline)
        self._rewrite_context([ctx.stored_at(memory, sid)])
        return memory, False

    def _get_by_id(self, doc_id: str, deadline: float) -> dict[str, Any] | None:
        """Realtime GET (sees a write before any refresh)."""
        from opensearchpy.exceptions import NotFoundError

        def get(t: float):
            try:
                return self.client.get(index=self.alias, id=doc_id, request_timeout=t)
            except NotFoundError:
                return None

        return self._call("get", get, deadline)

    def _retire(self, got: dict[str, Any], deadline: float) -> None:
        """Move a superseded memory out of the slot it blocks: copy it to `r_<reference>`
        (idempotent: a second copy is a 409), so history and `forget` counts survive."""
        from opensearchpy.exceptions import ConflictError

        src = got["_source"]
        try:
            self._call(
                "retire",
                lambda t: self.client.create(index=self.alias, id=q.retired_id(src["reference"]), body=src, request_timeout=t, **self._params()),
                deadline,
            )
        except ConflictError:
            pass

    def _replace(self, sid: str, doc: dict[str, Any], got: dict[str, Any], deadline: float) -> bool:
        """Overwrite a dead slot occupant only if nobody changed it since we read it."""
        from opensearchpy.exceptions import ConflictError

        try:
            self._call(
                "replace",
                lambda t: self.client.index(
                    index=self.alias, id=sid, body=doc, if_seq_no=got["_seq_no"], if_primary_term=got["_primary_term"],
                    request_timeout=t, **self._params(),
                ),
                deadline,
            )
            return True
        except ConflictError:
            return False

    def _mark_superseded(self, reference: str, by: str, at: datetime, deadline: float) -> None:
        hits = self._call(
            "lookup", lambda t: self.client.search(index=self.alias, body=q.reference_lookup(reference), request_timeout=t), deadline
        )["hits"]["hits"]
        for hit in hits:
            body = {"doc": {"superseded_by": by, "updated_at": q.iso(at)}}
            self._call(
                "supersede",
                lambda t, _id=hit["_id"]: self.client.update(index=self.alias, id=_id, body=body, request_timeout=t, **self._params()),
                deadline,
            )

    def insert_many(self, memories: Sequence[Memory]) -> list[tuple[Memory, bool]]:
        """Bulk import with `_bulk` `create` actions on the slot ids, chunked; an item that
        conflicts (duplicate, retried, dead slot) or supersedes another goes through
        `insert`, so the outcome equals inserting one by one. One refresh at the end."""
        results: list[tuple[Memory, bool] | None] = [None] * len(memories)
        chunk = self.settings.opensearch_bulk_chunk
        slow: list[int] = []
        stored: list[ctx.Position | None] = []
        for start in range(0, len(memories), chunk):
            part = [(i, memories[i]) for i in range(start, min(start + chunk, len(memories)))]
            lines: list[dict[str, Any]] = []
            sent: list[int] = []
            seen: set[str] = set()
            for i, m in part:
                sid = q.slot_id(m)
                if m.supersedes or sid in seen:
                    slow.append(i)
                    continue
                seen.add(sid)
                lines += [{"create": {"_index": self.alias, "_id": sid}}, self._document(m)]
                sent.append(i)
            if not lines:
                continue
            response = self._call("bulk", lambda t: self.client.bulk(body=lines, request_timeout=max(t, 1.0)))
            for i, item in zip(sent, response["items"]):
                status = item["create"].get("status", 500)
                if 200 <= status < 300:
                    results[i] = (memories[i], False)
                    stored.append(ctx.stored_at(memories[i], q.slot_id(memories[i])))
                else:
                    slow.append(i)
        if self._refresh:
            self._call("refresh", lambda t: self.client.indices.refresh(index=self.alias, request_timeout=t))
        self._rewrite_context(stored)  # after the refresh: each window sees the whole batch
        for i in sorted(slow):
            results[i] = self.insert(memories[i])
        return [r for r in results if r is not None]

    def delete(self, rf: ReadFilter, reference: str | None = None) -> int:
        return self._delete("delete_by_query", q.delete_query(rf, reference))

    def purge_expired(self, now: datetime) -> int:
        return self._delete("purge", q.expired_query(now))

    def _delete(self, op: str, body: dict[str, Any]) -> int:
        """`_delete_by_query`, then the neighbours of what it removed get a context without
        its words (their positions are read first: afterwards they are gone)."""
        gone = self._positions(body["query"]) if self._context_ready() else []
        response = self._call(
            op,
            lambda t: self.client.delete_by_query(
                index=self.alias, body=body, refresh=self._refresh is not None, conflicts="proceed", request_timeout=t
            ),
        )
        self._rewrite_context(gone)
        return int(response.get("deleted", 0))

    # -- neighbouring context --------------------------------------------------------------
    def _context_ready(self) -> bool:
        if not self._ready:
            self._ensure_index(None)
        return self.context_on

    def _positions(self, query: dict[str, Any]) -> list[ctx.Position | None]:
        """The context positions of every document `query` matches, a page at a time."""
        out: list[ctx.Position | None] = []
        after = None
        while True:
            body = q.positions_search(query, 500, after)
            hits = self._call("positions", lambda t: self.client.search(index=self.alias, body=body, request_timeout=t))["hits"]["hits"]
            out += [ctx.deleted_at(h["_source"]) for h in hits]
            if len(hits) < 500:
                return out
            after = hits[-1]["sort"]

    def _rewrite_context(self, positions: Sequence[ctx.Position | None]) -> None:
        """Recompute the context of the memories around each position. A failure here is
        logged, not raised: the write itself is done, the context only ranks, and
        `xmemo opensearch reindex` rebuilds every context."""
        from opensearchpy.exceptions import OpenSearchException

        changed = [p for p in positions if p is not None]
        if not changed or not self._context_ready():
            return
        try:
            for start in range(0, len(changed), 100):
                part = changed[start : start + 100]
                body = q.msearch_body(self.alias, ctx.searches(part))
                # index-scoped paths: the scheduled purge's role may touch the memory index only
                answers = self._call("context", lambda t: _checked(self.client.msearch(index=self.alias, body=body, request_timeout=t)))
                lines = [
                    line
                    for doc_id, fields in ctx.contexts(part, answers, self.context_weight).items()
                    for line in q.context_update(self.alias, doc_id, self._known(fields))
                ]
                if not lines:  # the last memories of their groups were deleted: nobody is left to update
                    continue
                response = self._call("context", lambda t: self.client.bulk(index=self.alias, body=lines, request_timeout=max(t, 1.0)))
                failed = [i["update"] for i in response["items"] if i["update"].get("status", 500) >= 300 and i["update"].get("status") != 404]
                if failed:  # 404: deleted meanwhile, nothing to rewrite
                    log.warning("neighbouring context: %d updates failed (%s)", len(failed), _error_kind(failed[0]))
        except (StoreUnavailable, OpenSearchException) as exc:
            log.warning("neighbouring context not rewritten (%s); `xmemo opensearch reindex` rebuilds it", type(exc).__name__)

    def finish_supersedes(self, now: datetime, window: timedelta = timedelta(days=2)) -> int:
        """Mark the memories that a recent superseding write meant to hide but did not: on
        OpenSearch a supersede is two documents (the new memory, then the mark on the old
        one) with no transaction, and a store failure between them answers 503 with the new
        one stored. The client's retry finishes it; this sweep (run by the scheduled purge)
        finishes it when nobody retries. Idempotent; the count of memories marked."""
        from opensearchpy.exceptions import NotFoundError

        successors: dict[str, tuple[str, datetime]] = {}  # old reference → its latest successor, written when
        after = None
        while True:
            body = q.superseding_since(now - window, 500, after)
            hits = self._call("sweep", lambda t: self.client.search(index=self.alias, body=body, request_timeout=t))["hits"]["hits"]
            for hit in hits:
                src = hit["_source"]
                successors[src["supersedes"]] = (src["reference"], datetime.fromisoformat(src["created_at"].replace("Z", "+00:00")))
            if len(hits) < 500:
                break
            after = hits[-1]["sort"]
        finished = 0
        targets = list(successors)
        for i in range(0, len(targets), 500):
            chunk = targets[i : i + 500]
            body = q.unmarked(chunk)
            hits = self._call("sweep", lambda t: self.client.search(index=self.alias, body=body, request_timeout=t))["hits"]["hits"]
            for hit in hits:
                old = hit["_source"]["reference"]
                try:
                    self._mark_superseded(old, *successors[old], self.caller.deadline())
                except NotFoundError:  # forgotten meanwhile
                    continue
                finished += 1
        return finished

    # -- reads ---------------------------------------------------------------------------
    def get(self, reference: str, rf: ReadFilter) -> Memory | None:
        hits = self._call(
            "get", lambda t: self.client.search(index=self.alias, body=q.get_search(reference, rf), request_timeout=t)
        )["hits"]["hits"]
        return q.from_document(hits[0]["_source"]) if hits else None

    def list(self, rf: ReadFilter, limit: int, cursor: str | None) -> tuple[list[Memory], str | None]:
        body = q.list_search(rf, limit, cursor)
        hits = self._call("list", lambda t: self.client.search(index=self.alias, body=body, request_timeout=t))["hits"]["hits"]
        more = len(hits) > limit
        hits = hits[:limit]
        next_cursor = q.encode_cursor(hits[-1]["sort"]) if more and hits else None
        return [q.from_document(h["_source"]) for h in hits], next_cursor

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
        if not self._ready:
            self._ensure_index(None)  # settles the k-NN and context capabilities before the first query
        # The cluster ranks the lexical leg with its own BM25: no index-wide statistics search
        # rides along (`read_cost`), so a recall costs the same at any index size.
        lexical = q.lexical_search(text_query, rf, lexical_k, strict=strict, ranked=self.ranked, worded=self.worded)
        wants_semantic = vector is not None and semantic_k > 0 and not strict
        semantic = q.knn_search(vector, rf, semantic_k) if wants_semantic and self.knn else None
        searches = [b for b in (lexical, semantic) if b is not None]
        out = Candidates()
        if not searches:
            return self._with_reason(out, wants_semantic)
        body = q.msearch_body(self.alias, searches)
        tolerated = {len(searches) - 1} if semantic is not None else set()
        responses = self._call(
            "msearch", lambda t: _checked(self.client.msearch(body=body, request_timeout=t, filter_path=q.MSEARCH_FILTER), tolerated)
        )
        it = iter(responses)
        # a tolerant search's hits are candidates (`q.CANDIDATE_FIELDS`): `memories` brings the records returned
        out.partial = not strict
        read = q.from_document if strict else q.candidate_from_document
        if lexical is not None:
            out.lexical = [Hit(read(h["_source"]), float(h["_score"] or 0.0)) for h in q.hits_of(next(it))]
        if semantic is not None:
            answer = next(it)
            if "error" in answer:  # a refusal, not an outage: this cluster cannot run k-NN
                self._semantic_off(f"the cluster refused the k-NN query ({_error_kind(answer)})")
            else:
                out.semantic = [
                    Hit(read(h["_source"]), q.cosine_from_knn_score(float(h["_score"])), q.unpacked_vector(h["_source"].get("vector_bytes")))
                    for h in q.hits_of(answer)
                ]
        return self._with_reason(out, wants_semantic)

    def token_states(self, references: Sequence[str], rf: ReadFilter) -> dict[str, bytes]:
        """One `_search` for the pool's states within the caller's visibility (a second round
        trip after `search`: the ~1.8 KB a memory is fetched only for a ranking that is not
        empty, and never with ordinary reads). Nothing on an index before mapping v7."""
        if not references:
            return {}
        if not self._ready:
            self._ensure_index(None)
        if not self.stated:
            return {}
        out: dict[str, bytes] = {}
        refs = sorted(set(references))
        for start in range(0, len(refs), STATES_PAGE):
            body = q.states_search(refs[start : start + STATES_PAGE], rf)
            hits = q.hits_of(self._call(
                "token_states", lambda t: self.client.search(index=self.alias, body=body, request_timeout=t, filter_path=q.SEARCH_FILTER)
            ))
            out.update((h["_source"]["reference"], base64.b64decode(h["_source"]["token_states"])) for h in hits if h["_source"].get("token_states"))
        return out

    def memories(self, references: Sequence[str], rf: ReadFilter, *, states: bool = False) -> dict[str, Memory]:
        """The whole records of those of `references` the caller may see, by reference: one
        `_search` (a page of `STATES_PAGE`) for the candidates a read returns. With `states`,
        each brings its token states too (the late leg's pool, in the same round trip)."""
        if not references:
            return {}
        if not self._ready:
            self._ensure_index(None)
        out: dict[str, Memory] = {}
        refs = sorted(set(references))
        for start in range(0, len(refs), STATES_PAGE):
            body = q.records_search(refs[start : start + STATES_PAGE], rf, states=states and self.stated)
            hits = q.hits_of(self._call(
                "records", lambda t: self.client.search(index=self.alias, body=body, request_timeout=t, filter_path=q.SEARCH_FILTER)
            ))
            for h in hits:
                src = dict(h["_source"])
                packed = src.pop("token_states", None)
                memory = q.from_document(src)
                out[memory.reference] = memory.model_copy(update={"token_states": base64.b64decode(packed)}) if packed else memory
        return out

    def _with_reason(self, out: Candidates, wants_semantic: bool) -> Candidates:
        if wants_semantic and not self.knn:
            out.semantic_unavailable = self.semantic_off or "the OpenSearch store runs lexical-only (XMEMO_OPENSEARCH_KNN=false)"
        return out

    def count(self) -> int:
        return int(self._call("count", lambda t: self.client.count(index=self.alias, request_timeout=t))["count"])

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _error_kind(item: dict[str, Any]) -> str:
    error = item["error"]
    return error.get("type", "error") if isinstance(error, dict) else str(error)


def _checked(response: dict[str, Any], tolerated: set[int] = frozenset()) -> list[dict[str, Any]]:
    """`_msearch` answers 200 with per-search errors; raise them as transport errors so a
    429/5xx is retried by `Caller` and anything else surfaces. A 4xx of a search in
    `tolerated` (the k-NN leg) is returned as it is: the caller runs on without that leg."""
    from opensearchpy.exceptions import TransportError

    for n, item in enumerate(response["responses"]):
        if "error" in item:
            status = int(item.get("status", 500))
            if n in tolerated and 400 <= status < 500 and status != 429:
                continue
            raise TransportError(status, _error_kind(item), {"error": {"type": _error_kind(item)}})
    return response["responses"]
