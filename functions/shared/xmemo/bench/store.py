"""`xmemo bench store`: bulk-indexing rate and query latency (p50/p95) of the OpenSearch
store against a local osmem-server it starts (or `--url`), side by side with the embedded
SQLite store, on the same synthetic corpus in the same run; and, for the OpenSearch store,
what one recall and one search_memory cost on the wire (searches, round trips, request and
response bytes, the documents each body lets the cluster touch) at two index sizes, the
callers' own memories the same at both (the index grows by other tenants' memories)."""

from __future__ import annotations

import json
import random
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ._report import latency_summary, markdown_table, save

WORDS = (
    "deploy billing postgres kafka cache latency invoice customer schema migration token vault rotate "
    "incident outage pager budget roadmap release branch review testing staging production metrics "
    "alert dashboard queue worker retry backoff timeout index search shard replica backup restore "
    "password policy audit compliance region lambda gateway cognito scope tenant project team owner"
).split()

CAVEATS = [
    "osmem-server is an in-memory Go server on this machine: no JVM, no Lucene segments, no replication, "
    "no network hop, so absolute latencies and indexing rates will differ on a real cluster "
    "(expect slower single requests over TLS + SigV4 and much higher sustained bulk throughput across shards).",
    "The OpenSearch store ranks the lexical leg with the cluster's own BM25 (osmem's bleve here, Lucene's on OpenSearch): "
    "no index-wide statistics search rides along. The figures measure speed, not relevance.",
    "Writes are visible immediately on osmem; on OpenSearch `refresh=wait_for` adds up to the refresh interval "
    "(1 s default) to every `remember`; Serverless refreshes on its own schedule (seconds).",
    "No k-NN: the semantic leg is not measured here; on a real cluster it adds an HNSW search per recall "
    "(same `_msearch` round trip).",
    "Both stores share 2 cores with other work on this machine.",
]


def register(sub) -> None:
    p = sub.add_parser("store", help="bulk-indexing rate and query latency: OpenSearch vs the embedded store")
    p.add_argument("--store", choices=["opensearch", "sqlite"], default="opensearch",
                   help="store under test; the embedded store always runs alongside for comparison")
    p.add_argument("--size", type=int, default=50_000, help="memories to index (default 50,000)")
    p.add_argument("--queries", type=int, default=300, help="queries per kind")
    p.add_argument("--tenants", type=int, default=50, help="owners the corpus is spread over")
    p.add_argument("--url", help="use this OpenSearch instead of starting osmem-server")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--wire-sizes", default="2000,20000",
                   help="index sizes (comma-separated) at which the OpenSearch store's wire cost per recall is measured")
    p.add_argument("--wire-queries", type=int, default=100, help="recalls (and search_memory calls) per wire size")
    p.add_argument("--out", type=Path, help="save store.json and store.md here")
    p.set_defaults(func=run)


def corpus(size: int, tenants: int, seed: int, owner_prefix: str = "user") -> list[Any]:
    from ..ids import new_reference
    from ..models import Memory, boundary_of
    from ..tools import content_hash

    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(size):
        owner = f"{owner_prefix}{rng.randrange(tenants)}"
        team = f"{owner_prefix}team{rng.randrange(5)}".removeprefix("user") if rng.random() < 0.3 else None
        content = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40))) + f" #{i}"
        now = start + timedelta(seconds=i)
        bucket = rng.choice(["default", "ops", "eng"])
        out.append(
            Memory(
                reference=new_reference(int(now.timestamp() * 1000)), type=rng.choice(["note", "fact", "decision"]),
                content=content, location=bucket, bucket=bucket, owner=owner, team=team,
                tags=tuple(rng.sample(["db", "ops", "sec", "perf", "ui"], rng.randint(0, 2))),
                boundary=boundary_of(owner, team, None), created_at=now, updated_at=now, content_sha256=content_hash(content),
            )
        )
    return out


# -- the wire cost of a read -------------------------------------------------------------------
def _compact(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def _touches(body: dict[str, Any]) -> int | None:
    """How many documents a body lets the cluster score and return: its `size` (a k-NN
    clause's `k` if larger), or None when it reaches the whole index (`read_cost.index_wide`)."""
    from ..store.opensearch.read_cost import index_wide

    if index_wide(body):
        return None
    knn = body.get("query", {}).get("knn")
    k = max((c.get("k", 0) for c in knn.values()), default=0) if isinstance(knn, dict) else 0
    return max(int(body.get("size", 10)), k)


class Wire:
    """A real client that tallies what each read sends and receives, as the store calls it
    (each `search`/`msearch` is a round trip; each `_search` body one search)."""

    def __init__(self, client: Any):
        self._client = client
        self.reset()

    def reset(self) -> None:
        self.round_trips = self.searches = self.request_bytes = self.response_bytes = self.hits = 0
        self.bodies: list[dict[str, Any]] = []

    def _tally(self, bodies: list[dict[str, Any]], request_bytes: int, response: dict[str, Any]) -> dict[str, Any]:
        self.round_trips += 1
        self.searches += len(bodies)
        self.bodies += bodies
        self.request_bytes += request_bytes
        self.response_bytes += _compact(response)
        answers = response.get("responses", [response])
        self.hits += sum(len(a.get("hits", {}).get("hits", [])) for a in answers)
        return response

    def search(self, **kw: Any) -> dict[str, Any]:
        return self._tally([kw["body"]], _compact(kw["body"]), self._client.search(**kw))

    def msearch(self, **kw: Any) -> dict[str, Any]:
        lines = list(kw["body"])
        kw["body"] = lines
        ndjson = sum(_compact(line) + 1 for line in lines)
        return self._tally(lines[1::2], ndjson, self._client.msearch(**kw))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def wire_cost(url: str, sizes: list[int], tenants: int, queries: int, seed: int) -> list[dict[str, Any]]:
    """Per recall and per search_memory, the mean wire cost at each index size. The callers'
    memories (`tenants` owners, `sizes[0]` memories) are the same at every size; the index
    grows by other tenants' memories in between."""
    from ..auth import principal_from_claims
    from ..config import Settings
    from ..models import RecallInput, SearchInput
    from ..services import Services
    from ..store.opensearch import OpenSearchStore
    from ..store.opensearch.read_cost import index_wide
    from .. import tools

    settings = Settings(store="opensearch", opensearch_url=url, opensearch_knn=False, embedder="none",
                        opensearch_alias=f"xmemo-wire-{int(time.time())}", opensearch_deadline_s=60, opensearch_timeout_s=30)
    store = OpenSearchStore.from_settings(settings)
    wire = Wire(store.client)
    store._client = wire
    svc = Services(settings, store, None)
    batch, indexed, out = 500, 0, []
    mine = corpus(sizes[0], tenants, seed)
    others = corpus(max(sizes) - sizes[0], tenants * 100, seed + 3, owner_prefix="other")
    pending = mine + others
    for size in sizes:
        grow, pending = pending[: size - indexed], pending[size - indexed :]
        for i in range(0, len(grow), batch):
            store.insert_many(grow[i : i + batch])
        indexed = store.count()
        rng = random.Random(seed + 1)  # the same queries by the same callers at every size
        row: dict[str, Any] = {"index_size": indexed}
        for kind in ("recall", "search_memory"):
            totals = {"searches": 0, "round_trips": 0, "request_bytes": 0, "response_bytes": 0, "hits_returned": 0,
                      "documents_bounded_by_bodies": 0, "index_wide_bodies": 0}
            for _ in range(queries):
                who = principal_from_claims({"sub": f"user{rng.randrange(tenants)}", "scope": "xmemo/memory:read",
                                             "custom:teams": f"team{rng.randrange(5)}"})
                query = " ".join(rng.choice(WORDS) for _ in range(3))
                wire.reset()
                if kind == "recall":
                    tools.recall(svc, who, RecallInput(query=query))
                else:
                    tools.search_memory(svc, who, SearchInput(query=query))
                wide = [b for b in wire.bodies if index_wide(b)]
                totals["searches"] += wire.searches
                totals["round_trips"] += wire.round_trips
                totals["request_bytes"] += wire.request_bytes
                totals["response_bytes"] += wire.response_bytes
                totals["hits_returned"] += wire.hits
                totals["documents_bounded_by_bodies"] += sum(_touches(b) or 0 for b in wire.bodies)
                totals["index_wide_bodies"] += len(wide)
            row[kind] = {k: round(v / queries, 1) for k, v in totals.items()}
        out.append(row)
        print(f"  wire cost at {indexed:,} memories: {json.dumps(row)}", flush=True)
    store.close()
    return out


def measure(name: str, store: Any, memories: list[Any], args) -> dict[str, Any]:
    from ..auth import principal_from_claims, read_filter

    batch = 500
    t0 = time.perf_counter()
    for i in range(0, len(memories), batch):
        store.insert_many(memories[i : i + batch])
    index_s = time.perf_counter() - t0
    rng = random.Random(args.seed + 1)
    now = datetime(2027, 1, 1, tzinfo=timezone.utc)
    lat: dict[str, list[float]] = {"recall (any term)": [], "search_memory (all terms)": [], "list (newest 20)": [], "remember (one)": []}
    for n in range(args.queries):
        who = principal_from_claims({"sub": f"user{rng.randrange(args.tenants)}", "scope": "xmemo/memory:read",
                                     "custom:teams": f"team{rng.randrange(5)}"})
        rf = read_filter(who, now)
        q = " ".join(rng.choice(WORDS) for _ in range(3))
        recall = lambda: store.search(q, None, rf, lexical_k=60, semantic_k=0, strict=False)  # noqa: E731
        strict = lambda: store.search(q, None, rf, lexical_k=10, semantic_k=0, strict=True)  # noqa: E731
        calls = [("recall (any term)", recall), ("search_memory (all terms)", strict), ("list (newest 20)", lambda: store.list(rf, 20, None))]
        for kind, call in calls:
            t = time.perf_counter()
            call()
            lat[kind].append((time.perf_counter() - t) * 1000)
    for extra in corpus(min(args.queries, 200), args.tenants, args.seed + 2):
        extra = extra.model_copy(update={"content": extra.content + " fresh", "content_sha256": extra.content_sha256[::-1]})
        t = time.perf_counter()
        store.insert(extra)
        lat["remember (one)"].append((time.perf_counter() - t) * 1000)
    return {
        "store": name,
        "memories": store.count(),
        "bulk_index_s": round(index_s, 2),
        "bulk_index_per_s": round(len(memories) / index_s, 1),
        "latency_ms": {k: latency_summary(v) for k, v in lat.items()},
    }


def run(args) -> int:
    from ..config import Settings
    from ..store.sqlite import SQLiteStore

    memories = corpus(args.size, args.tenants, args.seed)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        print(f"indexing {args.size:,} memories into the embedded store …", flush=True)
        sqlite = SQLiteStore(Path(tmp) / "bench.sqlite3")
        results.append(measure("sqlite (embedded)", sqlite, memories, args))
        sqlite.close()
    server, wire = None, []
    if args.store == "opensearch":
        from ..store.opensearch import OpenSearchStore

        url = args.url
        if url is None:
            from osmem_server import OsmemServer  # dev dependency: the local OpenSearch-compatible server

            server = OsmemServer.start(japanese=False)
            url = server.url
        try:
            settings = Settings(store="opensearch", opensearch_url=url, opensearch_knn=False, embedder="none",
                                opensearch_alias=f"xmemo-bench-{int(time.time())}", opensearch_deadline_s=60,
                                opensearch_timeout_s=30)
            store = OpenSearchStore.from_settings(settings)
            print(f"indexing {args.size:,} memories into OpenSearch at {url} …", flush=True)
            label = "opensearch (osmem-server 0.1.6, local)" if server else "opensearch"
            results.append(measure(label, store, memories, args))
            store.close()
            sizes = sorted(int(x) for x in args.wire_sizes.split(",") if x.strip())
            print(f"wire cost per read at {', '.join(f'{n:,}' for n in sizes)} memories …", flush=True)
            wire = wire_cost(url, sizes, args.tenants, args.wire_queries, args.seed)
        finally:
            if server is not None:
                server.close()
    report = {"size": args.size, "queries": args.queries, "tenants": args.tenants, "results": results, "wire": wire, "caveats": CAVEATS}
    md = render(report)
    print(md)
    save(args.out, "store", report, md)
    return 0


def render(report: dict[str, Any]) -> str:
    rows = [[r["store"], f"{r['memories']:,}", r["bulk_index_per_s"], r["bulk_index_s"]] for r in report["results"]]
    out = [f"## Store benchmark: {report['size']:,} memories, {report['tenants']} tenants, {report['queries']} queries per kind\n",
           markdown_table(["store", "memories", "bulk index /s", "bulk index s"], rows)]
    lrows = []
    for r in report["results"]:
        for kind, s in r["latency_ms"].items():
            lrows.append([r["store"], kind, s["p50_ms"], s["p95_ms"]])
    out.append(markdown_table(["store", "operation", "p50 ms", "p95 ms"], lrows))
    if report.get("wire"):
        keys = ["searches", "round_trips", "request_bytes", "response_bytes", "hits_returned", "documents_bounded_by_bodies", "index_wide_bodies"]
        wrows = [[f"{row['index_size']:,}", kind, *(row[kind][k] for k in keys)] for row in report["wire"] for kind in ("recall", "search_memory")]
        out.append("### Wire cost per read (OpenSearch store; mean per call; the callers' memories the same at every size)\n")
        out.append(markdown_table(["index size", "read", "searches", "round trips", "request bytes", "response bytes", "hits returned",
                                   "documents the bodies bound", "index-wide bodies"], wrows))
    out.append("What would differ on a real cluster:\n\n" + "\n".join(f"- {c}" for c in report["caveats"]) + "\n")
    return "\n".join(out)
