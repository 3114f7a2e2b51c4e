"""`search_memory` on a kept store with the derived index's scoring (`textindex.Statistics.scores`)
of this checkout against an older copy of that module, alternating query by query in one
process (each query asked with both, in turns, so a change of the machine's speed falls on
both): the answers must be identical (references and scores), and each version's wall and
CPU milliseconds are reported. Nothing is written.

    git show 4c8724b:functions/shared/xmemo/store/textindex.py > OLD_textindex.py
    nice .venv/bin/python -m research.strict_scoring STORE.sqlite3 --old OLD_textindex.py --out bench-out/latency/strict-scoring
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path


def _summary(xs: list[float]) -> str:
    xs = sorted(xs)
    at = lambda q: xs[min(len(xs) - 1, int(len(xs) * q))]  # noqa: E731
    return f"{at(0.5):.1f} / {at(0.95):.1f} / {at(0.99):.1f}; mean {statistics.fmean(xs):.2f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.strict_scoring")
    p.add_argument("store", type=Path)
    p.add_argument("--old", type=Path, required=True, help="an older xmemo/store/textindex.py")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--size", type=int, default=100_000, help="the corpus size whose queries the store answers")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)

    from xmemo import tools
    from xmemo.auth import principal_from_claims
    from xmemo.bench._corpus import synthetic
    from xmemo.config import Settings
    from xmemo.models import SearchInput
    from xmemo.services import Services
    from xmemo.startup import settle
    from xmemo.store import textindex
    from xmemo.store.sqlite import SQLiteStore

    spec = importlib.util.spec_from_file_location("xmemo.store._old_textindex", args.old)
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    scoring = {"old": old.Statistics.scores, "new": textindex.Statistics.scores}
    queries = synthetic(args.size, args.queries, 2000).queries
    store = SQLiteStore(args.store)
    svc = Services(Settings(data_dir=args.store.parent, embedder="none"), store, None)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read"})
    for q in queries:  # warm the page cache and the index's counts
        tools.search_memory(svc, principal, SearchInput(query=q))
    settle()
    wall: dict[str, list[float]] = {"old": [], "new": []}
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    differ = 0
    for r in range(args.rounds):
        for i, q in enumerate(queries):
            got = {}
            for version in ("old", "new") if (i + r) % 2 else ("new", "old"):
                textindex.Statistics.scores = scoring[version]
                c, w = time.process_time(), time.perf_counter()
                answer = tools.search_memory(svc, principal, SearchInput(query=q))
                wall[version].append((time.perf_counter() - w) * 1000)
                cpu[version].append((time.process_time() - c) * 1000)
                got[version] = [(h.reference, h.score) for h in answer.results]
            differ += got["old"] != got["new"]
    store.close()
    md = (
        f"# `search_memory`, scoring of {args.old} (old) against this checkout (new)\n\n"
        f"store: {args.store} ({args.queries} queries × {args.rounds} rounds, alternated query by query)\n\n"
        "| scoring | wall ms, p50 / p95 / p99 | CPU ms, p50 / p95 / p99 |\n|---|---|---|\n"
        + "".join(f"| {v} | {_summary(wall[v])} | {_summary(cpu[v])} |\n" for v in ("old", "new"))
        + f"\nQueries whose answers (references and scores) differ: {differ} of {args.queries * args.rounds}\n"
        + f"Load average after: {open('/proc/loadavg').read().split()[0]}\n"
    )
    print(md)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "strict-scoring.md").write_text(md)
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
