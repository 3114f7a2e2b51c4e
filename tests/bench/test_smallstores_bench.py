"""`xmemo bench smallstores`: generated small stores measured through the real `recall`,
with and without the relevance floors, and the report saved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmemo.cli import main

pytestmark = pytest.mark.embedder


def test_smallstores_reports_found_and_empty_shares(tmp_path: Path, capsys):
    out = tmp_path / "out"
    assert main(["bench", "smallstores", "--sizes", "1", "5", "--stores", "1", "--unanswerable", "3", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    default, off = report["default"], report["floors_off"]
    assert default["found_at_3"]["all"]["questions"] == 2 * (1 + 5)  # each memory asked two ways
    assert default["found_at_3"]["size 1"]["share"] == 1.0
    assert default["empty"]["random_letters"] == {"queries": 6, "share": 1.0}
    assert off["empty"]["random_letters"]["share"] == 0.0  # with the floors off, something always comes back
    assert "answered with nothing" in (out / "report.md").read_text() and "found@3" in capsys.readouterr().out
