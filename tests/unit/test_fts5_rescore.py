"""The pure parts of the OpenSearch store's FTS5 re-scoring (`store.opensearch.rescore`):
how a document's stored fields give back the SQLite row's own and context terms, and how
the index-wide counts of the statistics search become FTS5's scores. That the scores equal
the SQLite store's on a server is `tests/opensearch/test_rescore.py`."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from xmemo.store import records
from xmemo.store.fts5rank import idf, row_score
from xmemo.store.opensearch import queries as q
from xmemo.store.opensearch.rescore import _tokens, rescored, stats_searches

OWN, NEAR = "garden water garden", "tomato garden"


@pytest.mark.parametrize("weight", [0.5, 0.25, 1.0, 2.0, 0.0])
def test_the_stored_fields_give_back_own_and_context_terms_at_any_weight(weight):
    src = {"terms": records.ranked_terms(OWN, NEAR, weight), "context": NEAR}
    own, near = _tokens(src, False, weight)
    assert own == OWN.split()
    assert near == (NEAR.split() if weight > 0 else [])
    assert _tokens({"words": "the garden s gate"}, True, weight) == (["the", "garden", "s", "gate"], [])


def test_row_length_counts_every_column():
    assert records.row_length("a b c", "a b", "x y z w") == 9
    assert records.row_length("", "", "") == 0


def document(n: int, own: str, near: str, words: int) -> dict:
    created = datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=n)
    return {"_source": {
        "reference": f"mem_{n:026d}", "type": "note", "content": own, "location": "chat/1", "bucket": "default", "owner": "ann",
        "boundary": "ann", "source": {"client_id": "c"}, "created_at": q.iso(created), "updated_at": q.iso(created),
        "content_sha256": str(n), "terms": records.ranked_terms(own, near, 0.5), "context": near,
        "length": records.row_length(" ".join(["w"] * words), own, near),
    }}


def test_rescored_ranks_by_fts5s_formula_over_index_wide_counts_newest_first_on_ties():
    # the cluster's order: a long memory first, then two identical short ones (older first)
    hits = [document(1, "garden " * 5 + "shed " * 40, "", 45), document(2, "garden", "", 1), document(3, "garden", "", 1)]
    stats = [{"hits": {"total": {"value": 100}}, "aggregations": {"length": {"value": 100 * 20.0}}}, {"hits": {"total": {"value": 30}}}]
    totals, holding = stats_searches("the gardens", False)
    assert totals["query"] == {"match_all": {}} and totals["aggregations"] == {"length": {"sum": {"field": "length"}}}
    assert holding == {"size": 0, "track_total_hits": True, "query": {"term": {"terms": "garden"}}}
    assert [b["query"] for b in stats_searches("the gardens", True)[1:]] == [{"term": {"words": "the"}}, {"term": {"words": "gardens"}}]
    out = rescored(hits, stats, "the gardens", False, 0.5)
    assert [h.memory.reference for h in out] == [hits[2]["_source"]["reference"], hits[1]["_source"]["reference"], hits[0]["_source"]["reference"]]
    short = row_score({"garden": idf(100, 30)}, ["garden"], [], 1 + 1, 20.0, 0.5)
    assert out[0].score == out[1].score == short  # 30 of 100 documents hold the term, whoever holds them
    assert out[2].score == row_score({"garden": idf(100, 30)}, ["garden"] * 5 + ["shed"] * 40, [], 45 + 45, 20.0, 0.5)
