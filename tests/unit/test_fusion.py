"""Fusion of the two legs, on hand-made candidates."""

from datetime import datetime, timezone

from xmemo.config import Settings
from xmemo.models import Memory
from hypothesis import given, settings
from hypothesis import strategies as st

from xmemo import text
from xmemo.retrieval.fusion import NearDuplicates, Ranked, _near, boost_groups, fuse
from xmemo.store.base import Candidates, Hit


def _m(ref: str) -> Memory:
    at = datetime(2025, 1, 1, tzinfo=timezone.utc)
    return Memory(reference=ref, type="note", content=ref, location="x", bucket="default", owner="o",
                  boundary="owner:o", created_at=at, updated_at=at, content_sha256=ref)


def _cands(extra: list[Hit] = ()) -> Candidates:
    # lexical: a is far ahead of b and c; semantic: c just ahead of b, a close behind
    lexical = [Hit(_m("a"), 20.0), Hit(_m("b"), 5.0), Hit(_m("c"), 4.0)]
    semantic = [Hit(_m("c"), 0.86), Hit(_m("b"), 0.85), Hit(_m("a"), 0.84), *extra]
    return Candidates(lexical, semantic)


def test_minmax_keeps_how_far_ahead_a_leg_is():
    ranked = fuse(_cands(), Settings(fusion="minmax", semantic_floor=0.8))
    assert [r.memory.reference for r in ranked] == ["a", "c", "b"]
    assert ranked[0].score == 1.0  # top of the lexical range (1.0) + bottom of the semantic one (0.0)


def test_rrf_only_sees_ranks():
    ranked = fuse(_cands(), Settings(fusion="rrf", semantic_weight=1.0, semantic_floor=0.8))  # equal weights
    # a: 1/61 + 1/63, c: 1/63 + 1/61 tie, broken by recency (equal) then stable order
    assert {r.memory.reference for r in ranked[:2]} == {"a", "c"}


def test_semantic_only_hit_below_the_floor_is_dropped_in_both_modes():
    for mode in ("rrf", "minmax"):
        cands = _cands([Hit(_m("d"), 0.50)])
        refs = [r.memory.reference for r in fuse(cands, Settings(fusion=mode, semantic_floor=0.8))]
        assert "d" not in refs
        refs = [r.memory.reference for r in fuse(cands, Settings(fusion=mode, semantic_floor=0.3))]
        assert "d" in refs


def test_a_query_floor_replaces_the_setting():
    cands = _cands([Hit(_m("d"), 0.50)])
    settings = Settings(fusion="minmax", semantic_floor=0.3)
    assert "d" not in [r.memory.reference for r in fuse(cands, settings, floor=0.8)]
    assert "d" in [r.memory.reference for r in fuse(cands, settings, floor=None)]


def test_weights_shift_the_balance():
    ranked = fuse(_cands(), Settings(fusion="minmax", lexical_weight=0.1, semantic_weight=1.0, semantic_floor=0.8))
    assert ranked[0].memory.reference == "c"


@given(st.sets(st.sampled_from("abcdefghijkl")), st.sets(st.sampled_from("abcdefghijkl")), st.sampled_from([0.0, 0.3, 0.5, 0.8, 0.85, 1.0]))
def test_the_pruned_near_duplicate_check_is_plain_jaccard(a, b, threshold):
    plain = 1.0 if not a and not b else len(a & b) / len(a | b)
    assert _near(frozenset(a), frozenset(b), threshold) == (plain >= threshold)


def test_diversity_keeps_the_first_of_near_repeats():
    def r(ref, content):
        return Ranked(_m(ref).model_copy(update={"content": content}), 1.0)

    ranked = [r("a", "deploy the api on friday"), r("b", "Deploy the API on Friday!"), r("c", "rotate the vault keys")]
    kept, skipped = diverse(ranked, 0.85)
    assert [k.memory.reference for k in kept] == ["a", "c"] and skipped == 1


def _in(ref: str, location: str, score: float) -> Ranked:
    return Ranked(_m(ref).model_copy(update={"location": location}), score)


def test_a_memory_in_the_conversation_of_the_best_hit_moves_up():
    # "b" and "c" tie alone; "b" shares the location of the best hit "a", so it gains more
    ranked = [_in("a", "chat/1", 1.0), _in("c", "chat/2", 0.4), _in("b", "chat/1", 0.4)]
    out = boost_groups(ranked, 0.5)
    assert [r.memory.reference for r in out] == ["a", "b", "c"]
    assert [round(r.score, 6) for r in out] == [1.5, 0.9, 0.6]  # c: its own group's best is 0.4


def test_a_memory_without_a_group_is_its_own_group():
    # the default location (the bucket itself) groups nothing: "x" and "y" do not lift each other,
    # and a lone memory of a named location gains exactly what a memory without one does
    ranked = [_in("x", "default", 1.0), _in("y", "default", 0.5), _in("z", "chat/9", 0.5)]
    out = {r.memory.reference: round(r.score, 6) for r in boost_groups(ranked, 0.5)}
    assert out == {"x": 1.5, "y": 0.75, "z": 0.75}


def test_group_weight_zero_keeps_the_fused_ranking():
    ranked = [_in("a", "chat/1", 1.0), _in("c", "chat/2", 0.4), _in("b", "chat/1", 0.3)]
    assert boost_groups(ranked, 0.0) == ranked and [r.score for r in ranked] == [1.0, 0.4, 0.3]


def diverse(ranked, threshold):
    """`NearDuplicates` asked about every candidate in rank order: the kept ones and the count skipped."""
    check = NearDuplicates(threshold)
    return [r for r in ranked if check.keeps(r.memory.content)], check.skipped


def _diverse_pairwise(ranked, threshold):
    """What `diverse` must keep: each candidate checked against every one kept before it."""
    kept, seen, skipped = [], [], 0
    for r in ranked:
        terms = frozenset(text.words(r.memory.content))
        if any(_near(terms, s, threshold) for s in seen):
            skipped += 1
            continue
        kept.append(r)
        seen.append(terms)
    return kept, skipped


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([f"w{i}" for i in range(24)]), max_size=30), max_size=40),
    st.sampled_from([-0.5, 0.0, 0.001, 0.3, 0.5, 0.8, 0.85, 0.9, 0.95, 1.0, 1.5]),
)
def test_diversity_by_size_keeps_what_the_pairwise_check_keeps(contents, threshold):
    ranked = [Ranked(_m(f"r{i}").model_copy(update={"content": " ".join(words)}), 1.0) for i, words in enumerate(contents)]
    kept, skipped = diverse(ranked, threshold)
    want, want_skipped = _diverse_pairwise(ranked, threshold)
    assert [k.memory.reference for k in kept] == [k.memory.reference for k in want] and skipped == want_skipped


def _at(ref: str, location: str) -> Memory:
    return _m(ref).model_copy(update={"location": location})


def test_leg_weights_follow_what_most_candidates_are():
    """Notes rank with the notes' weights, a conversation's turns with LoCoMo's; a tie (and no
    candidate at all) keeps the conversation weights every store ranked with before."""
    from xmemo.retrieval.fusion import leg_weights

    s = Settings(semantic_weight=0.7, late_weight=0.5, notes_semantic_weight=1.25, notes_late_weight=1.5)
    place = lambda m: (m.location, m.bucket)  # noqa: E731  (what `Hit.place` gives)
    turn = lambda r: place(_at(r, "conversations/a/session-1"))  # noqa: E731
    note = lambda r: place(_at(r, "repos/billing-api"))  # noqa: E731
    assert leg_weights([note("a"), note("b"), turn("c")], s).plan(1.0) == {"candidates": "notes", "lexical": 1.0, "semantic": 1.25, "late": 1.5}
    assert leg_weights([turn("a"), turn("b"), note("c")], s).plan(1.0) == {"candidates": "conversation", "lexical": 1.0, "semantic": 0.7, "late": 0.5}
    assert leg_weights([turn("a"), note("b")], s).candidates == "conversation"
    assert leg_weights([], s).candidates == "conversation"


def test_fuse_takes_the_query_s_semantic_weight():
    """`semantic_weight` given to `fuse` replaces the setting's: here it turns the order over."""
    s = Settings(fusion="minmax", semantic_weight=0.7, semantic_floor=0.8)
    assert [r.memory.reference for r in fuse(_cands(), s)] == ["a", "c", "b"]
    assert [r.memory.reference for r in fuse(_cands(), s, semantic_weight=1.5)][0] == "c"
