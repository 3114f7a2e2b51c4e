"""`xmemo bench policy` runs end to end and saves the side-by-side report (its figures
are printed and saved, never asserted: the pass/fail bar is tests/unit/test_policy_corpus.py)."""

import json
import subprocess
import sys


def test_policy_bench_saves_its_report(tmp_path):
    out = tmp_path / "bench"
    done = subprocess.run([sys.executable, "-m", "xmemo", "bench", "policy", "--repeat", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((out / "policy.json").read_text())
    assert set(report["totals"]) == {"xmemo", "detect-secrets"}
    for tool in ("xmemo", "detect-secrets"):
        totals = report["totals"][tool]
        assert totals["benign_snippets"] >= 300 and 0 <= totals["fp_rate_pct"] <= 100
        assert totals["secrets"] == sum(k["n"] for k in report["secrets"][tool].values())
        assert set(report["benign"][tool]) >= {"prose_ja", "config_env_example", "identifiers"}
    assert report["timing"]["corpus_texts"]["n"] == report["totals"]["xmemo"]["benign_snippets"] + report["totals"]["xmemo"]["secrets"]
    md = (out / "policy.md").read_text()
    assert md.startswith("# Capture policy") and "xmemo bench policy" in md and "detection" in md
