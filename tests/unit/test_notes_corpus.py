"""The notes corpus behind `xmemo bench notes` keeps the shape its figures depend on: enough
notes, places and questions, three languages (some questions crossing them), every judged
note present, and the fixed split its header states (the held-out half is never tuned on)."""

from __future__ import annotations

import json
import random
import typing
from collections import Counter, defaultdict

from xmemo.bench.notes import CORPUS, load
from xmemo.models import MemoryType

DATA = json.loads(CORPUS.read_text(encoding="utf-8"))
corpus = load(CORPUS)
NOTES = {n.id: n for n in corpus.notes}


def test_counts_places_and_types():
    assert len(corpus.notes) >= 200 and len(NOTES) == len(corpus.notes)
    assert len(corpus.questions) >= 300 and len({q.id for q in corpus.questions}) == len(corpus.questions)
    assert len({q.query for q in corpus.questions}) == len(corpus.questions)
    places = Counter(n.location for n in corpus.notes)
    assert len(places) >= 8 and min(places.values()) >= 10
    assert {p["location"] for p in DATA["places"]} == set(places)
    assert {n.type for n in corpus.notes} <= set(typing.get_args(MemoryType))
    assert {"decision", "preference", "procedure", "fact", "note"} <= {n.type for n in corpus.notes}
    assert all(1 <= len(n.content.strip()) <= 8000 for n in corpus.notes)


def test_each_place_is_written_in_order():
    """Notes of a place are consecutive in the file and their timestamps increase."""
    seen: list[str] = []
    times = defaultdict(list)
    for n in corpus.notes:
        if not seen or seen[-1] != n.location:
            assert n.location not in seen, f"{n.location} is not written consecutively"
            seen.append(n.location)
        times[n.location].append(n.at)
    assert all(t == sorted(t) and len(set(t)) == len(t) for t in times.values())


def test_languages_and_crossings():
    assert {n.lang for n in corpus.notes} == {"en", "fr", "ko"}
    langs = Counter(q.lang for q in corpus.questions)
    assert set(langs) == {"en", "fr", "ko"} and langs["fr"] >= 15 and langs["ko"] >= 15
    crossing = [q for q in corpus.questions if any(NOTES[r].lang != q.lang for r in q.answers)]
    assert len(crossing) >= 15


def test_judgments_exist_and_match_the_kind():
    for q in corpus.questions:
        assert set(q.judgments) <= set(NOTES), q.id
        assert set(q.judgments.values()) <= {1, 2}, q.id
        answers = len(q.answers)
        assert {"single": answers == 1, "multi": answers >= 2, "none": not q.judgments}[q.kind], q.id
    kinds = Counter(q.kind for q in corpus.questions)
    assert kinds["multi"] >= 30 and kinds["none"] >= 40


def test_the_split_is_the_stated_one():
    """Recomputed from the seed and rule in the file's header: per kind, in file order."""
    rng = random.Random(DATA["split"]["seed"])
    expected = {}
    for kind in DATA["split"]["strata"]:
        ids = [q.id for q in corpus.questions if q.kind == kind]
        rng.shuffle(ids)
        expected.update({i: "dev" for i in ids[: len(ids) // 2]})
        expected.update({i: "heldout" for i in ids[len(ids) // 2 :]})
    assert {q.id: q.split for q in corpus.questions} == expected
    assert "heldout" in " ".join(DATA["about"]) and "tune" in " ".join(DATA["about"]).lower()
