"""The per-question comparison of the two stores (`xmemo.bench.locomo.storediff`): its
replay of `recall`'s ranking and its swap of one store's scores onto the other's
candidates, on memories built here (the whole run needs osmem-server and LoCoMo)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from xmemo.bench.locomo.storediff import newest_first_on_ties, ranked, rescored
from xmemo.config import Settings
from xmemo.models import Memory, Source
from xmemo.store.base import Hit

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def memory(n: int, location: str = "chat/1") -> Memory:
    return Memory(
        reference=f"mem_{n:026d}", type="note", content=f"turn {n}", location=location, bucket="default", owner="ann",
        boundary="ann", source=Source(client_id="c"), created_at=T0 + timedelta(seconds=n), updated_at=T0, content_sha256=str(n),
    )


def test_rescored_orders_by_the_other_scores_then_newest_first():
    hits = [Hit(memory(1), 9.0), Hit(memory(2), 5.0), Hit(memory(3), 1.0)]
    score = {memory(1).reference: 1.0, memory(2).reference: 2.0, memory(3).reference: 2.0}
    out = rescored(hits, score)
    assert [h.memory.reference for h in out] == [memory(3).reference, memory(2).reference, memory(1).reference]
    assert [h.score for h in out] == [2.0, 2.0, 1.0]
    assert newest_first_on_ties(out)
    assert not newest_first_on_ties([out[1], out[0], out[2]])


def test_ranked_is_recalls_order_without_an_embedder():
    """Min-max over the candidates, then the group boost: a memory of the best hit's group
    overtakes an equal one elsewhere; with the boost off the scores alone decide."""
    hits = [Hit(memory(1), 10.0), Hit(memory(2), 6.0), Hit(memory(3, "chat/2"), 6.0), Hit(memory(4, "chat/3"), 0.0)]
    boosted = ranked(hits, Settings(embedder="none"))
    assert boosted[:3] == [memory(1).reference, memory(2).reference, memory(3).reference]  # memory 2 shares the best hit's group
    alone = ranked(hits, Settings(embedder="none", group_weight=0))
    assert alone[:3] == [memory(1).reference, memory(3).reference, memory(2).reference]  # equal scores: newest first
