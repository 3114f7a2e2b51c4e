"""SPEC §4 budget rules, with property tests over several scripts."""

from hypothesis import given, settings, strategies as st

from xmemo.packing import ELLIPSIS, pack
from xmemo.tokens import count

ENC = "o200k_base"


def test_items_in_rank_order_each_on_its_own_numbered_line():
    p = pack(["alpha", "beta", "gamma"], max_items=8, max_tokens=100, encoding=ENC, min_useful_tokens=4)
    assert p.context_text == "[1] alpha\n[2] beta\n[3] gamma"
    assert [i.index for i in p.items] == [0, 1, 2]
    assert (p.dropped, p.shortened) == (0, 0)
    assert p.used_tokens == count(p.context_text)


def test_max_items_drops_the_rest():
    p = pack(["a", "b", "c", "d"], max_items=2, max_tokens=100, encoding=ENC, min_useful_tokens=4)
    assert len(p.items) == 2 and p.dropped == 2


def test_item_that_does_not_fit_is_shortened_with_an_ellipsis():
    long = " ".join(f"word{i}" for i in range(200))
    p = pack(["short one", long], max_items=8, max_tokens=60, encoding=ENC, min_useful_tokens=8)
    assert p.shortened == 1 and p.dropped == 0
    assert p.items[1].shortened and p.items[1].text.endswith(ELLIPSIS)
    assert long.startswith(p.items[1].text[: -len(ELLIPSIS)])
    assert p.used_tokens == count(p.context_text) <= 60


def test_item_without_a_useful_part_is_dropped_and_smaller_later_ones_still_fit():
    long = " ".join(f"word{i}" for i in range(200))
    p = pack(["first item here", long, "tiny"], max_items=8, max_tokens=14, encoding=ENC, min_useful_tokens=20)
    assert [i.index for i in p.items] == [0, 2]
    assert p.dropped == 1 and p.shortened == 0


def test_nothing_fits():
    p = pack(["a long enough sentence"], max_items=8, max_tokens=1, encoding=ENC, min_useful_tokens=24)
    assert p.items == [] and p.context_text == "" and p.used_tokens == 0 and p.dropped == 1


def test_cut_never_splits_a_character():
    text = "작업을 계속하는 🎉🎉🎉 " * 50
    p = pack([text], max_items=1, max_tokens=20, encoding=ENC, min_useful_tokens=4)
    assert "\ufffd" not in p.context_text
    assert p.used_tokens == count(p.context_text) <= 20


scripts = st.sampled_from(
    [
        st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=400),
        st.text(alphabet=st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3), min_size=1, max_size=300),
        st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=300),
        st.text(alphabet=st.sampled_from("😀🎉👍🏽🚀❤️‍🔥 éàçü"), min_size=1, max_size=200),
        st.text(min_size=1, max_size=300),
    ]
).flatmap(lambda s: s)


@settings(max_examples=150, deadline=None)
@given(
    contents=st.lists(scripts.filter(lambda s: s.strip()), min_size=0, max_size=12),
    max_items=st.integers(1, 50),
    max_tokens=st.integers(1, 600),
    min_useful=st.integers(1, 40),
    encoding=st.sampled_from(["o200k_base", "cl100k_base"]),
)
def test_budget_invariants(contents, max_items, max_tokens, min_useful, encoding):
    p = pack(contents, max_items=max_items, max_tokens=max_tokens, encoding=encoding, min_useful_tokens=min_useful)
    assert p.used_tokens == count(p.context_text, encoding) <= max_tokens
    assert len(p.items) <= max_items
    assert len(p.items) + p.dropped == len(contents)
    assert p.shortened == sum(i.shortened for i in p.items)
    lines = p.context_text.split("\n") if p.items else []
    # each item starts on its own line with its position
    starts = [l for l in lines if l.startswith("[")]
    for n, item in enumerate(p.items, 1):
        assert f"[{n}] " + item.text in p.context_text
    assert len(starts) >= len(p.items)
    indexes = [i.index for i in p.items]
    assert indexes == sorted(indexes)
    for item in p.items:
        if not item.shortened:
            assert item.text == contents[item.index]
        else:
            assert item.text.endswith(ELLIPSIS)


def test_a_full_pack_stops_asking_for_candidates():
    asked = []

    def candidates():
        for i in range(100):
            asked.append(i)
            yield f"item {i}"

    p = pack(candidates(), max_items=3, max_tokens=1000, encoding=ENC, min_useful_tokens=4, total=100)
    assert len(p.items) == 3 and p.dropped == 97  # every candidate not packed is dropped, read or not
    assert asked == [0, 1, 2]
    p = pack(candidates(), max_items=50, max_tokens=8, encoding=ENC, min_useful_tokens=4, total=100)
    assert p.used_tokens <= 8 and len(p.items) + p.dropped == 100
