"""`xmemo bench policy` runs end to end and saves the side-by-side report (its figures
are printed and saved, never asserted: the pass/fail bar is tests/unit/test_policy_corpus.py),
with a small sample of the benign corpus at scale (the LoCoMo part alone: the full build
is the bench command's, not `make test`'s)."""

import json
import subprocess
import sys

from xmemo.bench._policy_corpus.at_scale import DEFAULT_LOCOMO

LOCOMO = DEFAULT_LOCOMO.resolve()


def json_lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_policy_bench_saves_its_report(tmp_path):
    out = tmp_path / "bench"
    done = subprocess.run([sys.executable, "-m", "xmemo", "bench", "policy", "--repeat", "1", "--out", str(out), "--at-scale",
                           "--at-scale-parts", "locomo", "--at-scale-cache", str(tmp_path / "cache")],
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
    scale = report["at_scale"]
    assert scale["texts"] == scale["parts"]["locomo"] == len(json_lines(tmp_path / "cache" / "benign.jsonl"))
    assert scale["xmemo"]["changed"] == len(scale["changed_texts"]) and "per_100k" in scale["detect-secrets"]
    if LOCOMO.exists():  # ../shared/data, beside the repository
        assert scale["texts"] > 3000
        assert scale["changed_texts"] == []  # ordinary conversation comes back as written
    md = (out / "policy.md").read_text()
    assert md.startswith("# Capture policy") and "xmemo bench policy" in md and "detection" in md
