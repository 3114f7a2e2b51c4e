"""The load benchmark in its short form (4 then 8 clients, 4 s each, 1,000 memories): it runs
end to end, every level on the one preloaded store, every operation of the mix is exercised,
and nothing errs. Latency is reported and
saved under `cases.FIGURES/load-short`, never asserted (the full run is `xmemo bench load`)."""

from __future__ import annotations

import argparse
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
        [*xmemo_command(), "bench", "load", "--duration", "4", "--clients", "4,8", "--memories", "1000", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "load.json").read_text())
    md = (out / "load.md").read_text()
    assert md.startswith("# Load through the local gateway") and "## 4 clients" in md and "## 8 clients" in md
    assert [level["clients"] for level in report["levels"]] == [4, 8]
    for level in report["levels"]:
        assert {r["op"] for r in level["rows"]} == {"recall", "search", "context", "get", "list", "remember", "forget"}
        assert level["total"]["n"] > 0
        assert level["total"]["errors"] == 0, level["error_samples"]
        assert level["cpu"]["generator_ms_per_request"] > 0 and level["cpu"]["gateway_ms_per_request"] > 0  # where the CPU went
    requests = sum(level["total"]["n"] for level in report["levels"])
    cases.record("load[short requests]", requests)
    print(f"short load: {[level['total'] for level in report['levels']]} (saved under {out})")


def test_client_levels_are_parsed_or_refused():
    from xmemo.bench.load import parse_levels

    assert parse_levels("8,32") == [8, 32] and parse_levels("16") == [16]
    for bad in ("", "0", "8,-1", "eight"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_levels(bad)
