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
    assert default["found_at_3"]["size 1"]["precision"] == 1.0 and default["found_at_3"]["size 1"]["items"] == 1.0  # a store of one memory
    assert 0 < default["found_at_3"]["all"]["precision"] <= 1 and off["found_at_3"]["all"]["items"] >= default["found_at_3"]["all"]["items"]
    assert default["empty"]["random_letters"] == {"queries": 6, "share": 1.0}
    assert off["empty"]["random_letters"]["share"] == 0.0  # with the floors off, something always comes back
    assert "answered with nothing" in (out / "report.md").read_text() and "found@3" in capsys.readouterr().out


def test_smallstores_measures_languages_it_was_not_fitted_on_one_language_per_store(tmp_path: Path):
    out = tmp_path / "out"
    args = ["bench", "smallstores", "--languages", "ja", "zh", "--monolingual", "--sizes", "5", "--stores", "1", "--unanswerable", "2", "--out", str(out)]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["unfitted"] == ["ja", "zh"] and report["run"]["monolingual"] is True
    found, empty = report["default"]["found_at_3"], report["default"]["empty"]
    assert found["lang ja"]["questions"] == found["lang zh"]["questions"] == 2 * 5  # one store each, each memory asked two ways
    assert empty["off_topic ja"]["queries"] == empty["off_topic zh"]["queries"] == 2 and empty["off_topic"]["queries"] == 4
    assert "never fitted on: ja zh" in (out / "report.md").read_text()


def test_smallstores_builds_stores_of_a_locomo_file(tmp_path: Path):
    """Each store holds turns of one conversation and is asked its questions answered by one
    turn, and the other conversation's questions."""
    from tests.bench.test_locomo_bench import _sample

    data = tmp_path / "tiny_locomo.json"
    data.write_text(json.dumps([_sample("conv-a", "parrot"), _sample("conv-b", "ferret")]))
    out = tmp_path / "out"
    assert main(["bench", "smallstores", "--locomo", str(data), "--sizes", "3", "--stores", "2", "--unanswerable", "2", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["locomo"] == str(data)
    found, empty = report["default"]["found_at_3"], report["default"]["empty"]
    assert found["size 3"]["questions"] == 2  # one single-turn question a store of three turns
    assert set(empty) == {"other_conversation", "random_letters"} and empty["other_conversation"]["queries"] == 4
    assert report["floors_off"]["empty"]["other_conversation"]["share"] == 0.0
    assert "Stores of the turns of" in (out / "report.md").read_text()
    # the data's text stays out of the report: misses and leaks name turns and questions by id
    assert "ferret" not in (out / "report.json").read_text() and "parrot" not in (out / "report.json").read_text()
    cited = [m["memory"] for m in report["floors_off"]["misses"]] + [r for leak in report["floors_off"]["leaks"] for r in leak["returned"]]
    assert cited and all(c.startswith("conv-") for c in cited)


def test_smallstores_refuses_a_missing_locomo_file(tmp_path: Path, capsys):
    assert main(["bench", "smallstores", "--locomo", str(tmp_path / "absent.json")]) == 2
    assert "no LoCoMo file at" in capsys.readouterr().err
