"""Idempotent index management behind the alias: `init` (create the current version and
point the alias at it), `migrate` (move to the current mapping version if the alias
points at an older one) and `reindex` (rebuild the current version into a fresh index).
Both moves copy with `_reindex` and swap the alias in one atomic `_aliases` call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .index import MAPPING_VERSION, concrete_name, index_body


@dataclass
class IndexPlan:
    alias: str
    dimension: int | None
    knn_engine: str = "lucene"
    serverless: bool = False
    replicas: int = 1

    def body(self) -> dict[str, Any]:
        return index_body(self.dimension, self.knn_engine, serverless=self.serverless, replicas=self.replicas)


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
    name = concrete_name(plan.alias)
    created = _create(client, name, plan.body(), timeout)
    client.indices.put_alias(index=name, name=plan.alias, request_timeout=timeout)
    return {"action": "created" if created else "aliased", "alias": plan.alias, "index": name}


def _move(client: Any, plan: IndexPlan, source: str, target: str) -> dict[str, Any]:
    _create(client, target, plan.body())
    copied = client.reindex(
        body={"source": {"index": source}, "dest": {"index": target, "op_type": "index"}},
        refresh=True,
        wait_for_completion=True,
        request_timeout=3600,
    )
    failures = copied.get("failures") or []
    if failures:
        raise RuntimeError(f"reindex {source} -> {target} had {len(failures)} failures; alias left on {source}")
    client.indices.update_aliases(
        body={"actions": [{"remove": {"index": source, "alias": plan.alias}}, {"add": {"index": target, "alias": plan.alias}}]}
    )
    return {"from": source, "to": target, "copied": copied.get("total", 0)}


def migrate(client: Any, plan: IndexPlan) -> dict[str, Any]:
    """Bring the alias to the current mapping version; a no-op when it is already there."""
    targets = alias_targets(client, plan.alias)
    if not targets:
        return init(client, plan)
    current = concrete_name(plan.alias)
    if current in targets:
        return {"action": "none", "alias": plan.alias, "index": current, "reason": f"already at v{MAPPING_VERSION}"}
    return {"action": "migrated", "alias": plan.alias, **_move(client, plan, targets[0], current)}


def reindex(client: Any, plan: IndexPlan) -> dict[str, Any]:
    """Rebuild into `<alias>-v<N>-r<k>` with the current mapping and analyzers (e.g. after
    an analyzer fix) and swap the alias; the old index is kept for rollback."""
    targets = alias_targets(client, plan.alias)
    if not targets:
        return init(client, plan)
    base = concrete_name(plan.alias)
    k = 1
    while client.indices.exists(index=f"{base}-r{k}"):
        k += 1
    return {"action": "reindexed", "alias": plan.alias, **_move(client, plan, targets[0], f"{base}-r{k}")}
