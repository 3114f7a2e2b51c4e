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
    assert figures["ingest_per_s"] > 0 and report["cold_import_ms"] > 0
    assert "semantic_leg" not in figures and "query_embedding" not in report  # lexical only
    assert (out / "latency.md").read_text().startswith("# Latency")
