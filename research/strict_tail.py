"""Where `search_memory`'s tail at 1M memories comes from: per query, wall and CPU time of
the strict leg as the latency benchmark asks it (its 200 synthetic queries, in the same
order, twice: the first pass reads much of the index from disk), and for the slowest, how
many candidates the leg scored, in how many rounds, and how much of its time tantivy's own
search took (a tie widens the round: the strict leg returns FTS5's order, the newest first
among equal scores, and tantivy's order among them is not that). Nothing is written.

    nice .venv/bin/python -m research.strict_tail STORE.sqlite3 --out bench-out/latency/strict-tail
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.strict_tail")
    p.add_argument("store", type=Path)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--size", type=int, default=100_000, help="the corpus size whose queries the store answers (the 1M store is 100k grown)")
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

    queries = synthetic(args.size, args.queries, 2000).queries
    store = SQLiteStore(args.store)
    svc = Services(Settings(data_dir=args.store.parent, embedder="none"), store, None)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read"})
    scored: list[list[int]] = []  # rows read and scored per round (`Statistics.visible_scores`), of the current query
    ties: list[int] = []
    original = textindex.Statistics.visible_scores

    def counting(self, conn, rowids, *rest):
        created, out = original(self, conn, rowids, *rest)
        scored[-1].append(len(rowids))
        if out:
            ties.append(sum(1 for s in out.values() if s == min(out.values())))
        return created, out

    searching: list[float] = []  # wall ms in tantivy's search, of the current query
    listing = textindex.TextIndex.candidates

    def timed(self, *a, **kw):
        start = time.perf_counter()
        try:
            return listing(self, *a, **kw)
        finally:
            searching[-1] += (time.perf_counter() - start) * 1000

    textindex.Statistics.visible_scores = counting
    textindex.TextIndex.candidates = timed
    searching.append(0.0)
    scored.append([])
    tools.search_memory(svc, principal, SearchInput(query=queries[0]))
    settle()
    passes = []
    for name in ("first pass (index partly on disk)", "second pass"):
        rows = []
        for q in queries:
            scored.append([])
            searching.append(0.0)
            c, t = time.process_time(), time.perf_counter()
            tools.search_memory(svc, principal, SearchInput(query=q))
            rows.append(((time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000, sum(scored[-1]), len(scored[-1]), searching[-1], q))
        passes.append((name, rows))
    store.close()

    def pct(xs: list[float], p: float) -> float:
        xs = sorted(xs)
        return round(xs[min(len(xs) - 1, int(p * len(xs)))], 1)

    md = f"# search_memory's tail on {args.store.parent.name} ({len(queries)} queries, twice)\n\n"
    md += "| pass | wall p50 / p95 / p99 ms | CPU p50 / p95 / p99 ms | CPU mean | queries that widened (scored in more than one round) |\n|---|---|---|---|---|\n"
    for name, rows in passes:
        wall, cpu = [r[0] for r in rows], [r[1] for r in rows]
        md += (f"| {name} | {pct(wall, .5)} / {pct(wall, .95)} / {pct(wall, .99)} | {pct(cpu, .5)} / {pct(cpu, .95)} / {pct(cpu, .99)} | "
               f"{statistics.fmean(cpu):.1f} | {sum(1 for r in rows if r[3] > 1)} |\n")
    md += "\nThe ten slowest of the second pass by CPU:\n\n| wall ms | CPU ms | of it in tantivy's search, wall ms | rows scored | scoring rounds | query |\n|---|---|---|---|---|---|\n"
    for wall, cpu, n, rounds, tantivy, q in sorted(passes[1][1], key=lambda r: -r[1])[:10]:
        md += f"| {wall:.1f} | {cpu:.1f} | {tantivy:.1f} | {n} | {rounds} | {q[:60]} |\n"
    widened = [r for r in passes[1][1] if r[3] > 1]
    rest = [r for r in passes[1][1] if r[3] <= 1]
    if widened and rest:
        md += (f"\nSecond pass: the {len(widened)} queries whose first round tied whole (every candidate scoring as the k-th best) "
               f"took {statistics.fmean(r[1] for r in widened):.1f} ms of CPU on average, the other {len(rest)} "
               f"{statistics.fmean(r[1] for r in rest):.1f} ms.\n")
    print(md)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "strict-tail.md").write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
