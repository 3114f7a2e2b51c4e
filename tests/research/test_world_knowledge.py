"""The ninth round's replica (`research.locomo.world_knowledge`): WordNet's files are read as
their format says, the class words climb the hierarchy as the docs say, and the command
runs, on a hand-made WordNet in WordNet's own file format."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.bench.test_locomo_bench import _sample
from research.locomo import recall_replica, class_links, breadth, world_knowledge

# offset: (lemmas, hypernyms (offset, "@" or "@i")); depths: entity 0, act 1, activity 2, hobby 3,
# pottery 4; location 1, city 2, lisbon 3 (an instance); bird 1, parrot 2
SYNSETS = {
    1000: (["entity"], []),
    1100: (["act", "human_action"], [(1000, "@")]),
    1200: (["activity"], [(1100, "@")]),
    1300: (["hobby", "pastime"], [(1200, "@")]),
    1400: (["pottery", "clayware"], [(1300, "@")]),
    1500: (["location"], [(1000, "@")]),
    1600: (["city", "metropolis"], [(1500, "@")]),
    1700: (["Lisbon"], [(1600, "@i")]),
    1800: (["bird"], [(1000, "@")]),
    1900: (["parrot"], [(1800, "@")]),
    1950: (["pot"], [(1000, "@")]),
}
SENSES = {"pottery": [1400], "city": [1600], "lisbon": [1700], "parrot": [1900, 1800], "hobby": [1300],
          "activity": [1200], "bird": [1800], "pot": [1950], "entity": [1000], "location": [1500], "act": [1100]}


def _write_wordnet(root: Path) -> Path:
    root.mkdir()
    lines = ["  1 This software and database is being provided ... (licence header lines start with spaces)"]
    for offset, (lemmas, ups) in SYNSETS.items():
        words = " ".join(f"{w} 0" for w in lemmas)
        ptrs = " ".join(f"{sym} {to:08d} n 0000" for to, sym in ups)
        lines.append(f"{offset:08d} 03 n {len(lemmas):02x} {words} {len(ups):03d} {ptrs} | a gloss".replace("  ", " "))
    (root / "data.noun").write_text("\n".join(lines) + "\n", encoding="latin-1")
    index = ["  1 licence header"] + [f"{w} n {len(o)} 1 @ {len(o)} 0 " + " ".join(f"{x:08d}" for x in o) for w, o in sorted(SENSES.items())]
    (root / "index.noun").write_text("\n".join(index) + "\n", encoding="latin-1")
    (root / "noun.exc").write_text("potteries pottery\nhis he\n", encoding="latin-1")
    return root


@pytest.fixture
def nouns(tmp_path: Path) -> world_knowledge.Nouns:
    return world_knowledge.Nouns(_write_wordnet(tmp_path / "wordnet"))


def test_the_files_are_read_as_wordnet_writes_them(nouns: world_knowledge.Nouns):
    assert nouns.senses["parrot"] == [1900, 1800]  # most frequent sense first
    assert nouns.lemmas[1100] == ["act", "human_action"]
    assert nouns.lemmas[1700] == ["lisbon"]
    assert nouns.up[1700] == [1600]  # an instance hypernym counts as a class
    assert [nouns.depth(s) for s in (1000, 1200, 1400, 1700)] == [0, 2, 4, 3]


def test_a_word_form_finds_its_lemma(nouns: world_knowledge.Nouns):
    assert nouns.base("potteries") == "pottery"  # the exception list
    assert nouns.base("cities") == "city" and nouns.base("parrots") == "parrot"  # the suffix rules
    assert nouns.base("his") is None  # an exception whose lemma is no noun here
    assert nouns.base("zqxj") is None


def test_the_classes_climb_up_to_the_limit_and_skip_the_general_ones(nouns: world_knowledge.Nouns):
    assert nouns.classes("pottery", 1, 1, 0) == ["hobby", "pastime"]
    assert nouns.classes("pottery", 1, 3, 0) == ["hobby", "pastime", "activity", "act", "human", "action"]
    assert nouns.classes("pottery", 1, 4, 2) == ["hobby", "pastime", "activity"]  # act (depth 1) and entity say nothing
    assert nouns.classes("Lisbon".lower(), 1, 2, 0) == ["city", "metropolis", "location"]
    assert nouns.classes("parrots", 1, 1, 0) == ["bird"] and nouns.classes("parrots", 2, 1, 0) == ["bird", "entity"]
    assert nouns.classes("teacher", 1, 3, 0) == []


def _tiny_locomo(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_locomo.json"
    path.write_text(json.dumps([_sample("conv-a", "parrot"), _sample("conv-b", "ferret")]))
    return path


def run_on_tiny(module, tmp_path: Path, capsys, monkeypatch, *extra: str) -> str:
    """A replica command's output on the tiny LoCoMo file, once its first row (`recall` as it
    is) is seen to find every answer there."""
    name = module.__name__.rsplit(".", 1)[1]
    monkeypatch.setattr("sys.argv", [name, "--data", str(_tiny_locomo(tmp_path)), "--cache", str(tmp_path / "vc"), *extra])
    module.main()
    out = capsys.readouterr().out
    first = next(line for line in out.splitlines() if line.startswith("| replica of recall"))
    assert first.split(" | ")[1] == "1.0000"
    return out


def test_a_class_the_question_names_finds_the_member(nouns: world_knowledge.Nouns, tmp_path: Path):
    """"What hobby did Ann start?" names no word of the pottery turns; their class words do.
    At weight 0 the leg gives back `recall`'s ranking."""
    questions = recall_replica.collect(_tiny_locomo(tmp_path), tmp_path / "vc")
    q = next(q for q in questions if q["text"] == "What hobby did Ann start?")
    documents = world_knowledge.class_documents(q, nouns, 1, 2, 0)
    pottery = [i for i, m in enumerate(q["memories"]) if "pottery" in m.content]
    assert all("hobbi" in documents[i] and "activ" in documents[i] for i in pottery)
    assert "citi" in documents[next(i for i, m in enumerate(q["memories"]) if "Lisbon" in m.content)]
    scores = breadth.leg_scores(q, documents)
    assert set(scores.argsort()[::-1][: len(pottery)]) == set(pottery) and scores.max() > 0
    for q in questions:
        kept = recall_replica.ranked(recall_replica.fused(q))
        assert recall_replica.ranked(class_links.add_leg(recall_replica.fused(q), breadth.leg_scores(q, world_knowledge.class_documents(q, nouns, 1, 3, 2)), 0.0)) == kept


def test_the_ninth_round_command_runs(tmp_path: Path, capsys, monkeypatch):
    wordnet = _write_wordnet(tmp_path / "wordnet")
    out = run_on_tiny(world_knowledge, tmp_path, capsys, monkeypatch, "--wordnet", str(wordnet))
    assert "| class leg: 1 senses, 3 up, depth >= 4, weight 0.2 |" in out
    assert "| class column: 1 senses, 3 up, depth >= 4, weight 0.2 |" in out
    assert "multi-hop evidence turns missed by recall's first ten: " in out and out.count("the halves") == 3


def test_top_scores_keep_the_first_k_and_start_where_the_candidates_end():
    cos = np.array([0.9, 0.1, 0.5, 0.3, 0.7])
    assert np.allclose(world_knowledge.top_scores(cos, 2), [0.4, 0, 0, 0, 0.2])  # less the third best
    assert (world_knowledge.top_scores(cos, 9) > 0).all()  # fewer memories than k: all are candidates


def test_a_second_models_vectors_are_found_by_text_and_the_command_reads_them(tmp_path: Path, capsys, monkeypatch):
    """`--write-texts` lists the split's questions and turns; vectors in that order (here random,
    but the question's own text made its nearest turn) are read back by text."""
    data, texts = _tiny_locomo(tmp_path), tmp_path / "texts.json"
    monkeypatch.setattr("sys.argv", ["world_knowledge", "--data", str(data), "--cache", str(tmp_path / "vc"), "--write-texts", str(texts)])
    world_knowledge.main()
    order = json.loads(texts.read_text())
    questions = recall_replica.collect(data, tmp_path / "vc")
    assert order["queries"] == sorted({q["text"] for q in questions})
    assert set(order["passages"]) == {m.content for q in questions for m in q["memories"]}
    rng = np.random.default_rng(0)
    P = rng.normal(size=(len(order["passages"]), 8))
    target = order["passages"].index(next(m.content for m in questions[0]["memories"] if "Lisbon" in m.content))
    Q = rng.normal(size=(len(order["queries"]), 8))
    Q[order["queries"].index(questions[0]["text"])] = P[target]
    unit = lambda X: (X / np.linalg.norm(X, axis=1, keepdims=True)).astype(np.float32)
    np.savez(tmp_path / "second.npz", queries=unit(Q), passages=unit(P))
    model = world_knowledge.SecondModel("toy", tmp_path / "second.npz", texts)
    q = questions[0]
    cos = model.cosines(q)
    assert q["memories"][int(cos.argmax())].content == order["passages"][target] and cos.max() == pytest.approx(1.0, abs=1e-5)
    monkeypatch.setattr("sys.argv", ["world_knowledge", "--data", str(data), "--cache", str(tmp_path / "vc"),
                                     "--texts", str(texts), "--second", f"toy={tmp_path / 'second.npz'}"])
    world_knowledge.main()
    out = capsys.readouterr().out
    assert "| toy alone (cosine) |" in out and "| toy as a second semantic leg, weight 0.3 |" in out and "best on each half" in out
