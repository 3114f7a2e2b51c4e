"""`recall_context`'s pack of the diverse candidates (`retrieval.pipeline.diverse_pack`): asked lazily,
it packs, drops and counts exactly what the whole diversity check followed by the pack
would, and stops checking candidates once the pack is full."""

from datetime import datetime, timezone

from hypothesis import given, settings, strategies as st

from xmemo import render
from xmemo.models import Memory
from xmemo.packing import pack
from xmemo.retrieval.fusion import Ranked
from xmemo.retrieval.pipeline import diverse_pack

from tests.unit.test_fusion import diverse

ENC = "o200k_base"
AT = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _ranked(contents: list[str]) -> list[Ranked]:
    return [
        Ranked(Memory(reference=f"r{i}", type="note", content=c, location="x", bucket="default", owner="o",
                      boundary="owner:o", created_at=AT, updated_at=AT, content_sha256=str(i)), 1.0 - i / 1000)
        for i, c in enumerate(contents)
    ]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([f"w{i}" for i in range(12)]), min_size=1, max_size=25), max_size=40),
    st.integers(1, 12),
    st.integers(1, 300),
    st.sampled_from([0.3, 0.5, 0.85, 1.0]),
)
def test_the_lazy_pack_is_the_whole_check_then_the_pack(words, max_items, max_tokens, threshold):
    ranked = _ranked([" ".join(w) for w in words])
    kept, packed, skipped = diverse_pack(ranked, threshold, max_items, max_tokens, ENC, 4)
    all_kept, all_skipped = diverse(ranked, threshold)
    want = pack([render.as_data(r.memory.content) for r in all_kept], max_items=max_items, max_tokens=max_tokens,
                encoding=ENC, min_useful_tokens=4)
    assert packed.context_text == want.context_text and packed.used_tokens == want.used_tokens
    assert [kept[i.index].memory.reference for i in packed.items] == [all_kept[i.index].memory.reference for i in want.items]
    assert [(i.text, i.tokens, i.shortened) for i in packed.items] == [(i.text, i.tokens, i.shortened) for i in want.items]
    assert packed.dropped == want.dropped + all_skipped  # the budget's `dropped`: every candidate left out
    assert skipped <= all_skipped


def test_candidates_past_a_full_pack_are_not_checked():
    ranked = _ranked([f"distinct memory number {i} about topic {i * 7}" for i in range(120)])
    kept, packed, skipped = diverse_pack(ranked, 0.85, 8, 1500, ENC, 4)
    assert len(packed.items) == 8 and packed.dropped == 112
    assert len(kept) + skipped == 8  # the 112 others were never looked at
