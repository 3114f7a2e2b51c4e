"""Exact k-NN in front of osmem-server, which has none: a `FaultProxy` answer that runs each
k-NN search (alone or inside `_msearch`) as the filter alone on osmem, scores every match's
stored `embedding` by `cosinesimil` ((1 + cos) / 2) and returns the best `size`, with the
body's `_source` excludes applied; every other request goes to osmem unchanged. So the
OpenSearch store's semantic leg (the k-NN body, the filter inside it, the packed vectors of
mapping v6, fusion and the hub discount) runs end to end here. A real cluster's HNSW is
approximate; this is exact, so it checks what the store does with neighbours, not how a
cluster finds them. `_cat/plugins` lists `opensearch-knn`, as a cluster with k-NN does."""

from __future__ import annotations

import http.client
import json
import math
from typing import Any
from urllib.parse import urlparse

from tests.faultproxy import FaultProxy


def with_knn(proxy: FaultProxy) -> FaultProxy:
    proxy.answer = _Emulator(proxy.upstream).answer
    return proxy


class _Emulator:
    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream

    def _call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        conn = http.client.HTTPConnection(*self.upstream, timeout=30)
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        answer = json.loads(resp.read() or b"null")
        conn.close()
        return resp.status, answer

    def answer(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes] | None:
        route = urlparse(path).path
        if route.startswith("/_cat/plugins"):
            return 200, json.dumps([{"name": "osmem", "component": "opensearch-knn", "version": "emulated"}]).encode()
        if route.endswith("/_msearch") and body:
            lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
            default = route[: -len("/_msearch")].strip("/")
            if not any("knn" in (b.get("query") or {}) for b in lines[1::2]):
                return None
            responses = [self._one(h.get("index") or default, b) for h, b in zip(lines[::2], lines[1::2])]
            return 200, json.dumps({"took": 0, "responses": responses}).encode()
        if route.endswith("/_search") and body:
            search = json.loads(body)
            if "knn" in (search.get("query") or {}):
                return 200, json.dumps(self._knn(route[: -len("/_search")].strip("/"), search)).encode()
        return None

    def _one(self, index: str, search: dict[str, Any]) -> dict[str, Any]:
        if "knn" in (search.get("query") or {}):
            return {**self._knn(index, search), "status": 200}
        status, answer = self._call("POST", f"/{index}/_search", search)
        return {**answer, "status": status}

    def _knn(self, index: str, search: dict[str, Any]) -> dict[str, Any]:
        (field, clause), = search["query"]["knn"].items()
        query = [float(x) for x in clause["vector"]]
        filtered = {"bool": {"filter": [clause["filter"]]}} if "filter" in clause else {"match_all": {}}
        _, found = self._call("POST", f"/{index}/_search", {"size": 10000, "query": filtered})
        scored = []
        for hit in found["hits"]["hits"]:
            vector = hit["_source"].get(field)
            if vector:
                cos = sum(a * b for a, b in zip(query, vector)) / (_norm(query) * _norm(vector) or 1.0)
                scored.append(((1.0 + cos) / 2.0, hit))
        scored.sort(key=lambda s: -s[0])
        hits = [{**h, "_score": score, "_source": _filtered(h["_source"], search.get("_source") or {})}
                for score, h in scored[: min(int(search.get("size", 10)), int(clause["k"]))]]
        return {"took": 0, "timed_out": False, "hits": {"max_score": hits[0]["_score"] if hits else None, "hits": hits}}


def _filtered(source: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """`_source` filtering as the cluster does it (top-level field names): `includes`, then `excludes`."""
    includes, excludes = spec.get("includes"), set(spec.get("excludes", ()))
    return {k: v for k, v in source.items() if (includes is None or k in includes) and k not in excludes}


def _norm(v: list[float]) -> float:
    return math.sqrt(sum(x * x for x in v))
