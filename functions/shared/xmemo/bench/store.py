"""`xmemo bench store`: bulk-indexing rate and query latency (p50/p95) of the OpenSearch
store against a local osmem-server it starts (or `--url`), side by side with the embedded
SQLite store, on the same synthetic corpus in the same run."""

from __future__ import annotations

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
    "The OpenSearch store ranks the cluster's top candidates by FTS5's formula (mapping v5: size-0 statistics searches, "
    "one for the index's totals and one per query term, in the same `_msearch`, and the derived fields in each hit); the `cluster's BM25 only` rows "
    "time the same queries without that, interleaved with them. The figures measure speed, not relevance.",
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
    p.add_argument("--out", type=Path, help="save store.json and store.md here")
    p.set_defaults(func=run)


def corpus(size: int, tenants: int, seed: int) -> list[Any]:
    from ..ids import new_reference
    from ..models import Memory, boundary_of
    from ..tools import content_hash

    rng = random.Random(seed)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(size):
        owner = f"user{rng.randrange(tenants)}"
        team = f"team{rng.randrange(5)}" if rng.random() < 0.3 else None
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


def cluster_ranked(store: Any, call):
    """`call` with the OpenSearch store ranking by the cluster's BM25 alone (no FTS5
    re-scoring: no statistics search, no derived fields in the hits), as before mapping v5."""
    store.lengths = False
    try:
        return call()
    finally:
        store.lengths = True


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
    rescoring = getattr(store, "lengths", False)  # the OpenSearch store: also time each search without it, interleaved
    if rescoring:
        lat.update({"recall, cluster's BM25 only": [], "search_memory, cluster's BM25 only": []})
    for n in range(args.queries):
        who = principal_from_claims({"sub": f"user{rng.randrange(args.tenants)}", "scope": "xmemo/memory:read",
                                     "custom:teams": f"team{rng.randrange(5)}"})
        rf = read_filter(who, now)
        q = " ".join(rng.choice(WORDS) for _ in range(3))
        recall = lambda: store.search(q, None, rf, lexical_k=60, semantic_k=0, strict=False)  # noqa: E731
        strict = lambda: store.search(q, None, rf, lexical_k=10, semantic_k=0, strict=True)  # noqa: E731
        calls = [("recall (any term)", recall), ("search_memory (all terms)", strict), ("list (newest 20)", lambda: store.list(rf, 20, None))]
        if rescoring:
            calls += [("recall, cluster's BM25 only", lambda: cluster_ranked(store, recall)),
                      ("search_memory, cluster's BM25 only", lambda: cluster_ranked(store, strict))]
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
    server = None
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
        finally:
            if server is not None:
                server.close()
    report = {"size": args.size, "queries": args.queries, "tenants": args.tenants, "results": results, "caveats": CAVEATS}
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
    out.append("What would differ on a real cluster:\n\n" + "\n".join(f"- {c}" for c in report["caveats"]) + "\n")
    return "\n".join(out)
