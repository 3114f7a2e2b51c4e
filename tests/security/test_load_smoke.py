"""The load benchmark in its short form (5 s, 8 clients, 1,000 memories): it runs end to
end, every operation of the mix is exercised, and nothing errs. Latency is reported and
saved under `cases.FIGURES/load-short`, never asserted (the full run is `xmemo bench load`)."""

from __future__ import annotations

import json

import pytest

from tests import ROOT
from xmemo.local.spawn import xmemo_command

from . import cases

pytestmark = pytest.mark.e2e


def test_short_load_run_has_zero_errors():
    import subprocess

    out = cases.FIGURES / "load-short"
    done = subprocess.run(
        [*xmemo_command(), "bench", "load", "--duration", "5", "--clients", "8", "--memories", "1000", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "load.json").read_text())
    assert (out / "load.md").read_text().startswith("# Load through the local gateway")
    assert {r["op"] for r in report["rows"]} == {"recall", "search", "context", "get", "list", "remember", "forget"}
    assert report["total"]["n"] > 0
    assert report["total"]["errors"] == 0, report["error_samples"]
    assert report["cpu"]["generator_ms_per_request"] > 0 and report["cpu"]["gateway_ms_per_request"] > 0  # where the CPU went
    cases.record("load[short requests]", report["total"]["n"])
    print(f"short load: {report['total']} (saved under {out})")
