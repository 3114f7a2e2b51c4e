"""Idempotent index management behind the alias: `init` (create the current version and
point the alias at it), `migrate` (move to the current index version if the alias points
at another: an older mapping, or vectors of another embedder or dimension) and `reindex`
(rebuild the current version into a fresh index). Both moves copy with `_reindex`, then
recompute every neighbouring context in the new index (and re-embed every memory when the
vectors change), and only then swap the alias in one atomic `_aliases` call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ...retrieval.profile import PROFILE
from . import context
from .index import MAPPING_VERSION, concrete_name, index_body, mappings, vectors_tag

Embed = Callable[[list[str]], tuple[Sequence[Sequence[float]], Sequence["bytes | None"]]]  # `embedding.passage_embeddings`


@dataclass
class IndexPlan:
    """The index the settings call for. `embedder` names the model of the vectors
    (`embedding.embedder_identity`); `embed` computes passage vectors and token states when
    a move must re-embed, or fill in the states of memories written before mapping v7 (None:
    this process cannot; a move that must re-embed is refused, and one from before v7 leaves
    those memories without states, out of `recall`'s late-interaction leg). `states`: whether
    `embed` gives token states; without them (Bedrock) a move re-embeds nothing to fill them,
    which would pay for every memory's vector and keep none of it."""

    alias: str
    dimension: int | None
    knn_engine: str = "lucene"
    serverless: bool = False
    replicas: int = 1
    embedder: str | None = None
    digest: str | None = None  # the embedder's model-file sha256 (`xmemo.pin`; None: no file, as for Bedrock)
    embed: Embed | None = None
    context_weight: float = PROFILE.settings.context_weight  # the ratio `records.ranked_terms` writes into every document
    states: bool = True
    # A move's copy: `reindex_slices` `_reindex` calls over disjoint slices of the source
    # (`source.slice`), one after the other, each throttled to `reindex_rate` documents a
    # second (None: unthrottled), so a large index is copied in parts that live traffic can
    # share the cluster with. The alias moves only after every slice is copied.
    reindex_slices: int = 1
    reindex_rate: float | None = None

    def body(self) -> dict[str, Any]:
        return index_body(
            self.dimension, self.knn_engine, serverless=self.serverless, replicas=self.replicas, embedder=self.embedder,
            digest=self.digest,
        )

    def name(self) -> str:
        return concrete_name(self.alias, MAPPING_VERSION, vectors_tag(self.embedder, self.dimension))


ADMIN_TIMEOUT_S = 30.0  # creating an index or an alias is slower than a search


def alias_targets(client: Any, alias: str, timeout: float = ADMIN_TIMEOUT_S) -> list[str]:
    """Concrete indices the alias points at (empty when the alias does not exist)."""
    if not client.indices.exists_alias(name=alias, request_timeout=timeout):
        return []
    return sorted(client.indices.get_alias(name=alias, request_timeout=timeout).keys())


def _create(client: Any, name: str, body: dict[str, Any], timeout: float = ADMIN_TIMEOUT_S) -> bool:
    """Create `name`; False when it already exists (a concurrent init won the race)."""
    from opensearchpy.exceptions import RequestError

    if client.indices.exists(index=name, request_timeout=timeout):
        return False
    try:
        client.indices.create(index=name, body=body, request_timeout=timeout)
        return True
    except RequestError as exc:
        if "already_exists" in str(exc.error):
            return False
        raise


def init(client: Any, plan: IndexPlan, timeout: float = ADMIN_TIMEOUT_S) -> dict[str, Any]:
    """Create `<alias>-v<N>` and the alias if missing; never touches existing data."""
    targets = alias_targets(client, plan.alias, timeout)
    if targets:
        return {"action": "none", "alias": plan.alias, "index": targets[0], "reason": "alias exists"}
    name = plan.name()
    created = _create(client, name, plan.body(), timeout)
    client.indices.put_alias(index=name, name=plan.alias, request_timeout=timeout)
    return {"action": "created" if created else "aliased", "alias": plan.alias, "index": name}


def _vectors(client: Any, source: str, plan: IndexPlan) -> tuple[bool, bool]:
    """(leave the source's vectors behind, re-embed) for a move from `source`. Vectors are
    kept when the source holds this embedder's (an index of mapping v1 names no embedder,
    and one made before digests were recorded names no model file, as a plan may not: what
    is named on both sides decides)."""
    mapping = next(iter(client.indices.get_mapping(index=source).values())).get("mappings", {})
    field = mapping.get("properties", {}).get("embedding") or {}
    dimension = int(field["dimension"]) if field.get("type") == "knn_vector" else None
    meta = mapping.get("_meta") or {}
    named, digest = meta.get("xmemo_embedder"), meta.get("xmemo_embedder_digest")
    if not plan.dimension:
        return dimension is not None, False
    same_file = digest is None or plan.digest is None or digest == plan.digest
    if dimension == plan.dimension and named in (None, plan.embedder) and same_file:
        return False, False
    return True, True


def reindex_bodies(source: dict[str, Any], target: str, slices: int) -> list[dict[str, Any]]:
    """The `_reindex` bodies of one copy: the whole source, or `slices` disjoint slices."""
    dest = {"index": target, "op_type": "index"}
    if slices <= 1:
        return [{"source": source, "dest": dest}]
    return [{"source": {**source, "slice": {"id": n, "max": slices}}, "dest": dest} for n in range(slices)]


def _move(client: Any, plan: IndexPlan, source: str, target: str) -> dict[str, Any]:
    drop, re_embed = _vectors(client, source, plan)
    if re_embed and plan.embed is None:
        raise RuntimeError(
            f"moving {source} to {target} re-embeds every memory with {plan.embedder} ({plan.dimension}-d), which this "
            "process cannot load: run `xmemo opensearch migrate` with the same XMEMO_EMBEDDER settings where the model "
            "runs (the alias stays on the old index until then)"
        )
    _create(client, target, plan.body())
    src: dict[str, Any] = {"index": source}
    if drop:  # every field but the vector (the specification names `_source` fields, no excludes)
        src["_source"] = sorted(mappings(None)["properties"])
    copied = {"total": 0}
    for body in reindex_bodies(src, target, plan.reindex_slices):
        params: dict[str, Any] = {} if plan.reindex_rate is None else {"requests_per_second": plan.reindex_rate}
        part = client.reindex(body=body, refresh=True, wait_for_completion=True, request_timeout=3600, **params)
        failures = part.get("failures") or []
        if failures:
            raise RuntimeError(f"reindex {source} -> {target} had {len(failures)} failures; alias left on {source}")
        copied["total"] += int(part.get("total", 0))
    rebuilt = context.rebuild(
        lambda body: client.search(index=target, body=body, request_timeout=ADMIN_TIMEOUT_S)["hits"]["hits"],
        lambda lines: client.bulk(index=target, body=lines, refresh=True, request_timeout=600),
        target,
        plan.embed if re_embed or (plan.dimension and plan.states) else None,
        context_weight=plan.context_weight,
        re_embed=re_embed,
    )
    client.indices.update_aliases(
        body={"actions": [{"remove": {"index": source, "alias": plan.alias}}, {"add": {"index": target, "alias": plan.alias}}]}
    )
    return {"from": source, "to": target, "copied": copied.get("total", 0), "contexts": rebuilt, "re_embedded": re_embed}


def migrate(client: Any, plan: IndexPlan) -> dict[str, Any]:
    """Bring the alias to the current index version; a no-op when it is already there."""
    targets = alias_targets(client, plan.alias)
    if not targets:
        return init(client, plan)
    current = plan.name()
    if any(t == current or t.startswith(f"{current}-r") for t in targets):  # `reindex` rebuilds as -r<k>
        return {"action": "none", "alias": plan.alias, "index": current, "reason": f"already at v{MAPPING_VERSION}"}
    return {"action": "migrated", "alias": plan.alias, **_move(client, plan, targets[0], current)}


def re_embed(client: Any, plan: IndexPlan) -> dict[str, Any]:
    """`xmemo reindex` on OpenSearch: the alias moved to an index holding this embedder's
    vectors. `migrate` when the index version differs (another embedder name or dimension
    is another index name), `reindex` into `-r<k>` when only the model file differs; nothing
    when the alias's index already holds this embedder's vectors. Either move re-embeds
    every memory into the new index and swaps the alias only when the copy is complete."""
    moved = migrate(client, plan)
    if moved["action"] != "none":
        return moved
    if not plan.dimension or not _vectors(client, alias_targets(client, plan.alias)[0], plan)[1]:
        return {**moved, "reason": "the index already holds this embedder's vectors"}
    return reindex(client, plan)


def reindex(client: Any, plan: IndexPlan) -> dict[str, Any]:
    """Rebuild into `<alias>-v<N>-r<k>` with the current mapping and analyzers (e.g. after
    an analyzer fix) and swap the alias; the old index is kept for rollback."""
    targets = alias_targets(client, plan.alias)
    if not targets:
        return init(client, plan)
    base = plan.name()
    k = 1
    while client.indices.exists(index=f"{base}-r{k}"):
        k += 1
    return {"action": "reindexed", "alias": plan.alias, **_move(client, plan, targets[0], f"{base}-r{k}")}
