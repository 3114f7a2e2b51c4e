"""The hub discount of the semantic leg (`retrieval.discount_hubs`), on hand-made vectors,
and its wiring through `recall` with the local model."""

from datetime import datetime, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make_principal
from xmemo import tools
from xmemo.config import Settings
from xmemo.models import Memory, RecallInput, RememberInput
from xmemo.retrieval.fusion import discount_hubs, fuse
from xmemo.store.base import Candidates, Hit


def _m(ref: str) -> Memory:
    at = datetime(2025, 1, 1, tzinfo=timezone.utc)
    return Memory(reference=ref, type="note", content=ref, location="x", bucket="default", owner="o",
                  boundary="owner:o", created_at=at, updated_at=at, content_sha256=ref)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def _hits() -> list[Hit]:
    """`hub` is nearest the query but also near every other hit; `specific` is a little
    further from the query and far from the rest."""
    return [
        Hit(_m("hub"), 0.90, _unit(1, 1, 1, 1)),
        Hit(_m("specific"), 0.88, _unit(0, 0, 0, 1)),
        Hit(_m("x"), 0.80, _unit(1, 1, 0.8, 0)),
        Hit(_m("y"), 0.79, _unit(1, 0.8, 1, 0)),
        Hit(_m("z"), 0.78, _unit(0.8, 1, 1, 0)),
    ]


def refs(hits: list[Hit]) -> list[str]:
    return [h.memory.reference for h in hits]


def test_a_hit_near_everything_falls_below_one_near_the_query_alone():
    kept, scores = discount_hubs(_hits(), keep=5, weight=1.0, neighbours=2)
    assert refs(kept)[:2] == ["specific", "hub"]
    assert scores["hub"] < scores["specific"]


def test_the_discount_is_the_weight_times_the_mean_cosine_to_the_nearest_neighbours():
    hits = _hits()
    _, scores = discount_hubs(hits, keep=5, weight=0.5, neighbours=2)
    V = np.stack([h.vector for h in hits])
    near = sorted((V[0] @ V[1:].T).tolist(), reverse=True)[:2]
    assert scores["hub"] == pytest.approx(0.90 - 0.5 * np.mean(near), abs=1e-6)


def test_weight_zero_keeps_the_cosine_order_and_scores():
    kept, scores = discount_hubs(_hits(), keep=3, weight=0.0, neighbours=2)
    assert refs(kept) == ["hub", "specific", "x"]
    assert scores == {"hub": 0.90, "specific": 0.88, "x": 0.80}


def test_hits_without_vectors_are_left_as_the_store_ranked_them():
    hits = [Hit(h.memory, h.score) for h in _hits()]
    kept, scores = discount_hubs(hits, keep=2, weight=1.0, neighbours=2)
    assert refs(kept) == ["hub", "specific"] and scores == {"hub": 0.90, "specific": 0.88}


def test_keep_trims_after_the_discount_and_the_hits_keep_their_cosines():
    kept, scores = discount_hubs(_hits(), keep=2, weight=1.0, neighbours=2)
    assert len(kept) == 2 and set(scores) == set(refs(kept))
    assert {h.memory.reference: h.score for h in kept}["specific"] == 0.88  # raw cosine, for the floors


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=4).filter(lambda v: any(abs(x) > 0.1 for x in v)),
             min_size=1, max_size=30),
    st.integers(1, 40), st.floats(0, 3), st.integers(1, 12),
)
def test_the_kept_hits_are_the_best_discounted_ones_of_those_fetched(vectors, keep, weight, neighbours):
    hits = [Hit(_m(f"m{i}"), 0.9 - 0.01 * i, _unit(*v)) for i, v in enumerate(vectors)]
    kept, scores = discount_hubs(hits, keep, weight, neighbours)
    assert len(kept) == min(keep, len(hits)) and len(set(refs(kept))) == len(kept)
    assert set(scores) == set(refs(kept))
    values = [scores[r] for r in refs(kept)]
    assert values == sorted(values, reverse=True)
    dropped = [h for h in hits if h.memory.reference not in scores]
    if dropped and weight > 0 and len(hits) > 1:
        everyone = discount_hubs(hits, len(hits), weight, neighbours)[1]
        assert max(everyone[h.memory.reference] for h in dropped) <= min(values) + 1e-9


def test_fusion_weighs_the_discounted_scores_but_the_floor_reads_the_cosine():
    hits = _hits()
    kept, scores = discount_hubs(hits, keep=5, weight=1.0, neighbours=2)
    ranked = fuse(Candidates([], kept), Settings(fusion="minmax", semantic_floor=0.0, group_weight=0.0), semantic_scores=scores)
    assert [r.memory.reference for r in ranked][:2] == ["specific", "hub"]
    assert {r.memory.reference: r.cosine for r in ranked}["hub"] == 0.90
    # the floor still judges the raw cosine: every hit clears 0.75 as a cosine, none as a discounted score
    assert len(fuse(Candidates([], kept), Settings(fusion="minmax", semantic_floor=0.75), semantic_scores=scores)) == 5


ALICE = make_principal("alice")


@pytest.mark.embedder
def test_recall_fetches_a_wider_pool_and_reports_the_discount(semantic_services):
    svc = semantic_services
    for i in range(70):
        tools.remember(svc, ALICE, RememberInput(content=f"Note {i}: the build of service {i} passed on the {i % 7}th try."))
    plan = tools.recall(svc, ALICE, RecallInput(query="which build passed")).retrieval_plan["semantic"]
    assert plan["fetched"] == 70 and plan["candidates"] == 60
    assert plan["hub_discount"] == {"weight": svc.retrieval.hub_weight, "neighbours": svc.retrieval.hub_neighbours}
    off = svc.__class__(svc.settings.model_copy(update={"hub_weight": 0.0}), svc.store, svc.embedder, svc.clock)
    assert tools.recall(off, ALICE, RecallInput(query="which build passed")).retrieval_plan["semantic"]["fetched"] == 60


@pytest.mark.embedder
def test_a_large_pack_discounts_over_a_pool_of_its_own_wider_candidates(semantic_services):
    """`recall_context` shares `recall`'s discount, over `hub_pool` x the pack's wider
    candidates (twice `max_items` per leg): 130 memories, a 50-item pack keeps 100 of all 130."""
    from xmemo.models import ContextInput

    svc = semantic_services
    for i in range(130):
        tools.remember(svc, ALICE, RememberInput(content=f"Note {i}: the deploy of region {i} finished after {i % 9} retries."))
    ask = ContextInput(query="which deploy finished", max_items=50, max_tokens=4000)
    plan = tools.recall_context(svc, ALICE, ask).retrieval_plan["semantic"]
    assert plan["fetched"] == 130 and plan["candidates"] == 100 and plan["hub_discount"]["weight"] == svc.retrieval.hub_weight
    off = svc.__class__(svc.settings.model_copy(update={"hub_weight": 0.0}), svc.store, svc.embedder, svc.clock)
    assert tools.recall_context(off, ALICE, ask).retrieval_plan["semantic"]["fetched"] == 100


def test_the_sqlite_store_hands_each_semantic_hit_its_stored_vector(tmp_path):
    from xmemo.auth import ReadFilter
    from xmemo.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "x.sqlite3")
    try:
        for i, v in enumerate(([1, 0, 0, 0], [0.6, 0.8, 0, 0], [0, 0, 1, 0])):
            m = _m(f"m{i}").model_copy(update={"content": f"content {i}", "content_sha256": f"h{i}", "embedding": tuple(_unit(*v).tolist())})
            store.insert(m)
        rf = ReadFilter(holders=frozenset({"owner:o"}), now=datetime(2025, 6, 1, tzinfo=timezone.utc))
        hits = store.search("anything", _unit(1, 0, 0, 0), rf, lexical_k=0, semantic_k=3, strict=False).semantic
        for h in hits:
            assert np.asarray(h.vector) @ _unit(1, 0, 0, 0) == pytest.approx(h.score, abs=1e-6)
        assert [h.memory.content for h in hits][0] == "content 0"
    finally:
        store.close()
