"""`xmemo bench notes`: the metrics' arithmetic on hand-made cases (a metric bug fails here),
and the whole command on a tiny corpus written here, so the bench code path cannot rot.
Figures of the real corpus are the bench's to report, not asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmemo.bench.notes import Question, curve, cut, ndcg, score_list, summarize
from xmemo.cli import main


def _q(judgments: dict[str, int], kind: str = "multi", qid: str = "q1") -> Question:
    return Question(qid, "dev", kind, "en", "?", judgments)


def test_pack_figures_by_hand():
    q = _q({"a": 2, "b": 2, "c": 1})
    row = score_list(q, ["x", "a", "c", "y"], [10, 20, 30, 40])
    assert row["items"] == 4 and row["relevant"] == 2
    assert row["precision"] == 0.5  # a and c of four
    assert row["recall"] == 0.5  # a of the answers a, b (c is context, not an answer)
    assert row["first_relevant"] is False  # x comes first
    assert row["tokens"] == 100 and row["irrelevant_tokens"] == 50  # x and y
    # nDCG@5: gains 2^g - 1 = [0, 3, 1, 0] against the ideal [3, 3, 1]
    dcg = 3 / 1.584962500721156 + 1 / 2.0
    ideal = 3 + 3 / 1.584962500721156 + 1 / 2.0
    assert row["ndcg@5"] == pytest.approx(dcg / ideal)
    assert ndcg(q, ["a", "b", "c"]) == pytest.approx(1.0)
    assert ndcg(q, ["x"] * 5 + ["a"]) == 0.0  # beyond the fifth place counts nothing


def test_no_answer_questions_only_count_as_empty_or_not():
    none = _q({}, "none")
    row = score_list(none, ["x"], [7])
    assert row["precision"] is None and row["recall"] is None and row["first_relevant"] is None and row["ndcg@5"] is None
    assert row["empty"] is False and row["irrelevant_tokens"] == 7
    assert score_list(none, [], [])["empty"] is True


def test_summary_means_per_question():
    qs = [_q({"a": 2}, "single", "q1"), _q({"b": 2, "c": 2}, "multi", "q2"), _q({}, "none", "q3"), _q({}, "none", "q4"),
          _q({"d": 2}, "single", "q5")]
    lists = [(["a", "x"], [5, 5]), (["b"], [4]), ([], []), (["z"], [9]), ([], [])]
    rows = [{"kind": q.kind, "pack": score_list(q, ranked, tokens)} for q, (ranked, tokens) in zip(qs, lists)]
    s = summarize(rows, "pack")
    assert s["precision"] == 0.75  # (1/2 + 1/1) / 2: q5's empty pack has no precision
    assert s["empty_on_answerable"] == 1
    assert s["recall"] == round((1 + 0.5 + 0) / 3, 4)
    assert s["first_relevant"] == round(2 / 3, 4)
    assert s["empty_on_no_answer"] == 0.5
    assert s["irrelevant_tokens"] == round((5 + 0 + 0 + 9 + 0) / 5, 4)


def test_relative_cut_and_curve():
    assert cut([1.0, 0.9, 0.5, 0.1], 0.0) == 4
    assert cut([1.0, 0.9, 0.5, 0.1], 0.5) == 3
    assert cut([1.0, 0.9, 0.5, 0.1], 1.0) == 1
    assert cut([], 0.5) == 0
    q1, q2 = _q({"a": 2}, "single", "q1"), _q({}, "none", "q2")
    rows = [{"id": "q1", "kind": "single", "pack_ranked": [["a", 1.0], ["x", 0.4]]},
            {"id": "q2", "kind": "none", "pack_ranked": [["y", 0.3]]}]
    points = {p["cut"]: p for p in curve(rows, "pack", {"q1": q1, "q2": q2})}
    assert points[0.0]["precision"] == 0.5 and points[0.0]["recall"] == 1.0 and points[0.0]["items"] == 1.5
    assert points[0.5]["precision"] == 1.0 and points[0.5]["items"] == 1.0
    assert points[1.0]["empty_on_no_answer"] == 0.0  # a relative cut always keeps the top item


TINY = {
    "about": ["a tiny corpus for the test"], "version": 1,
    "split": {"seed": 1, "strata": ["single", "multi", "none"], "rule": "hand-made"},
    "places": [{"location": "repo/x", "kind": "repository", "lang": "en"}],
    "memories": [
        {"id": "m1", "location": "repo/x", "type": "decision", "lang": "en", "at": "2026-01-01T09:00:00Z",
         "content": "The billing service stores invoices in Postgres."},
        {"id": "m2", "location": "repo/x", "type": "fact", "lang": "en", "at": "2026-01-01T09:20:00Z",
         "content": "The lighthouse keeper paints the tower every spring."},
        {"id": "m3", "location": "repo/x", "type": "procedure", "lang": "fr", "at": "2026-01-01T09:40:00Z",
         "content": "Pour déployer le site, lancer make deploy depuis la branche main."},
    ],
    "questions": [
        {"id": "q1", "split": "dev", "kind": "single", "lang": "en", "query": "where are invoices stored", "judgments": {"m1": 2}},
        {"id": "q2", "split": "heldout", "kind": "single", "lang": "en", "query": "lighthouse tower painting", "judgments": {"m2": 2}},
        {"id": "q3", "split": "heldout", "kind": "none", "lang": "en", "query": "zebra migration patterns", "judgments": {}},
    ],
}


def test_the_command_on_a_tiny_corpus(tmp_path: Path, capsys):
    corpus = tmp_path / "tiny.json"
    corpus.write_text(json.dumps(TINY))
    out = tmp_path / "out"
    assert main(["bench", "notes", "--no-progress", "--embedder", "none", "--corpus", str(corpus), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "## dev" in text and "## heldout" in text and "no constant may be tuned" in text
    report = json.loads((out / "report.json").read_text())
    rows = json.loads((out / "questions.json").read_text())
    assert [r["id"] for r in rows] == ["q1", "q2", "q3"]
    for r in rows:  # each row's figures are those of its own ranked pack
        q = Question(r["id"], r["split"], r["kind"], r["lang"], r["query"], r["judgments"])
        assert score_list(q, [ref for ref, _ in r["pack_ranked"]])["recall"] == r["pack"]["recall"]
    # the only note sharing words with q1 is m1: lexical retrieval finds it first
    assert rows[0]["pack_ranked"][0][0] == "m1" and rows[0]["pack"]["first_relevant"] is True
    assert report["splits"]["dev"]["pack"]["questions"] == 1 and report["splits"]["heldout"]["pack"]["no_answer"] == 1
    assert (out / "curve.svg").read_text().startswith("<svg") and (out / "command.txt").read_text().startswith("xmemo bench notes")
    assert "limit" in report["run"] and report["run"]["embedder"] == "none"
    # a figure is tied to the constants that produced it
    from xmemo.retrieval.profile import PROFILE

    assert report["run"]["profile"] == PROFILE.identity() and f"Ranking profile: {PROFILE.name} version {PROFILE.version}" in text


def test_one_split_only(tmp_path: Path, capsys):
    corpus = tmp_path / "tiny.json"
    corpus.write_text(json.dumps(TINY))
    assert main(["bench", "notes", "--no-progress", "--embedder", "none", "--corpus", str(corpus), "--split", "heldout",
                 "--out", str(tmp_path / "o")]) == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert list(report["splits"]) == ["heldout"]


def test_a_slice_of_the_shipped_corpus(tmp_path: Path, capsys):
    """The shipped corpus loads through the real tools and its held-out questions are asked as judged."""
    from xmemo.bench.notes import load

    out = tmp_path / "slice"
    assert main(["bench", "notes", "--no-progress", "--embedder", "none", "--split", "heldout", "--limit", "4",
                 "--out", str(out)]) == 0
    rows = json.loads((out / "questions.json").read_text())
    judged = {q.id: q for q in load().questions}
    assert len(rows) == 4 and all(r["split"] == "heldout" and r["judgments"] == judged[r["id"]].judgments for r in rows)
    assert list(json.loads((out / "report.json").read_text())["splits"]) == ["heldout"]
