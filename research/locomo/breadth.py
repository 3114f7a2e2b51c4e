"""Breadth for list questions, and memories described by their neighbours.

Usage (with a vector cache from `xmemo bench locomo --cache DIR`):
    .venv/bin/python -m research breadth --data ../shared/data/locomo/locomo_dev.json --cache DIR

Apart from the sixth round's hub discount, the rows of rounds two to seven moved multi-hop
R@10 by at most +0.02. This round tries
two new kinds of signal on `recall`'s replica (`recall_replica.fused`, the first row):
- breadth: a list question's evidence is scattered over sessions, so the first ten should
  not be one exchange (a penalty on turns adjacent to a better one, always or only when the
  question's scores are flat); topics that span sessions (k-means clusters of the store's
  vectors, the query's cosine to a turn's cluster); memories that are themselves questions
  rank lower (a prior on interrogative turns);
- neighbour expansion: each memory is also described by the words of its nearest memories
  in vector space (document expansion by nearest neighbours), scored as a third BM25 leg
  over those "neighbour documents". Exact (every memory's neighbours among the whole final
  store) and as a store could keep it on writes (each memory picks its neighbours among
  the memories before it, and is added to theirs). Also: the same link at query time
  (memories near the lexical hits gain their scores), and the question embedded without
  the words most of the store holds (a speaker's name in every turn).
  `--store-analysis`: the neighbour documents on the store's own analysis (FTS5's formula,
  `text.stems`), built into the lexical leg's row as a fourth column (`emulated_lexical`)
  or as a leg of their own (`own_leg_scores`).
- `--words`: doc2query with single words. Each memory is also described by the words of its
  conversation that, embedded as queries by our own model, would retrieve it best
  (`word_documents`), as a leg on the store's analysis: can the model tag "museum" with a
  class the question names?

Each row is R@10 overall, by category, on each half of the conversations and R@50; the
halves rule of `recall_replica.grid` decides, within each family."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np

from xmemo import text
from xmemo.retrieval.fusion import hubness
from xmemo.store import fts5rank
from . import recall_replica, class_links, sparse_terms, semantic_pool
from .recall_replica import fused, per_conversation, ranked
from xmemo.bench.locomo.system import VectorCache


def kept_row() -> dict:
    """The first row of every table: `recall`'s replica ranking."""
    return {"replica of recall (kept settings)": lambda q: ranked(fused(q))}


def adjacent_penalty(q: dict, score: dict[int, float], distance: int, penalty: float, n: int = 30) -> list[int]:
    """Greedy: the next pick is the best score less `penalty` × the query's best per turn
    already picked within `distance` turns of it in the same location (the first `n`)."""
    loc = recall_replica.location_of(q)
    top, left, out = max(score.values(), default=1.0), dict(score), []
    while left and len(out) < n:
        pick = max(left, key=lambda i: left[i] - penalty * top * sum(loc[j] == loc[i] and abs(j - i) <= distance for j in out))
        out.append(pick)
        del left[pick]
    return out + ranked(left)


def flatness(score: dict[int, float], n: int = 10) -> float:
    """The `n`-th best score over the best: near 1 when the first `n` are alike (a list question?)."""
    v = sorted(score.values(), reverse=True)
    return v[min(n, len(v)) - 1] / v[0] if v and v[0] > 0 else 1.0


def kmeans(M: np.ndarray, k: int, rounds: int = 25, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Spherical k-means: each row's cluster and the unit centroids."""
    rng = np.random.default_rng(seed)
    C = M[rng.choice(len(M), k, replace=False)].copy()
    for _ in range(rounds):
        of = np.argmax(M @ C.T, axis=1)
        for j in range(k):
            if (of == j).any():
                c = M[of == j].sum(axis=0)
                C[j] = c / np.linalg.norm(c)
    return np.argmax(M @ C.T, axis=1), C


def topic_clusters(q: dict, size: int, weight: float) -> list[int]:
    """Plus `weight` × the query's best × the min-max scaled cosine of the query to the turn's
    topic (k-means over the conversation's vectors, `size` turns a cluster on average)."""
    of, C = per_conversation(q, ("clusters", size), lambda: kmeans(q["M"], max(2, len(q["M"]) // size)))
    score = fused(q)
    near = C @ q["vector"]
    keys = list(score)
    s = recall_replica.minmax(np.array([near[of[i]] for i in keys]))
    top = max(score.values(), default=1.0)
    return ranked({i: score[i] + weight * top * float(x) for i, x in zip(keys, s)})


def question_share(content: str) -> float:
    """The share of a memory's sentences that are questions."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", content.split(": ", 1)[-1].strip()) if s]
    return sum(s.endswith("?") for s in sentences) / max(1, len(sentences))


def interrogative(q: dict, penalty: float) -> list[int]:
    score = fused(q)
    top = max(score.values(), default=1.0)
    return ranked({i: v - penalty * top * question_share(q["memories"][i].content) for i, v in score.items()})


def exact_neighbours(M: np.ndarray, k: int, csls: bool, groups: list[str] | None) -> list[list[int]]:
    """Each memory's `k` nearest among all the others (by cosine or CSLS; with `groups`, only
    memories of another location)."""
    S = M @ M.T
    np.fill_diagonal(S, -np.inf)
    if csls:
        r = hubness(M, 10)
        S = 2 * S - r[None, :] - r[:, None]
    if groups is not None:
        g = np.array(groups)
        S = np.where(g[:, None] == g[None, :], -np.inf, S)
    order = np.argsort(-S, axis=1)[:, :k]
    return [[int(j) for j in row if np.isfinite(S[i, j])] for i, row in enumerate(order)]


def incremental_neighbours(M: np.ndarray, k: int, groups: list[str] | None) -> list[list[int]]:
    """What a store can keep on writes: in insertion order (the rows' order), each memory
    picks its `k` nearest among the memories before it and is added to theirs."""
    linked: list[set[int]] = [set() for _ in range(len(M))]
    for i in range(1, len(M)):
        s = M[:i] @ M[i]
        if groups is not None:
            s = np.where(np.array(groups[:i]) == groups[i], -np.inf, s)
        for j in np.argsort(-s)[:k]:
            if np.isfinite(s[j]):
                linked[i].add(int(j))
                linked[int(j)].add(i)
    return [sorted(x) for x in linked]


def neighbour_scores(q: dict, how: str, k: int, other: bool) -> np.ndarray:
    """BM25 (bm25s, English stems and stop words, as `class_links`) of the question against each
    memory's neighbour document: the texts of its neighbours, not its own."""

    def build():
        groups = recall_replica.location_of(q) if other else None
        if how == "incremental":
            near = incremental_neighbours(q["M"], k, groups)
        else:
            near = exact_neighbours(q["M"], k, how == "csls", groups)
        texts = [m.content for m in q["memories"]]
        return recall_replica.bm25s_index(["\n".join(texts[j] for j in row) for row in near])

    index = per_conversation(q, ("neighbour documents", how, k, other), build)
    return recall_replica.bm25s_scores(index, q["text"], len(q["memories"]))


def neighbour_leg(q: dict, how: str, k: int, other: bool, weight: float) -> list[int]:
    """The neighbour documents' first 60 join the candidates with `weight` (`class_links.add_leg`)."""
    return ranked(class_links.add_leg(fused(q), neighbour_scores(q, how, k, other), weight))


def neighbour_vote(q: dict, k: int, weight: float) -> list[int]:
    """The same link at query time: each lexical hit's `k` nearest memories (CSLS) gain its
    BM25 score, summed, as a third leg."""
    near = per_conversation(q, ("csls neighbours", k), lambda: exact_neighbours(q["M"], k, True, None))
    vote = np.zeros(len(q["memories"]))
    for j, s in q["lex"]:
        vote[near[j]] += s
    return ranked(class_links.add_leg(fused(q), vote, weight))


def _fts_rows(q: dict) -> dict:
    """The conversation's FTS rows as the SQLite store fills them: `words`, `stems`, and
    `context` (the stems of the previous and next memory of the same location)."""

    def build() -> dict:
        loc = recall_replica.location_of(q)
        stems = [text.stems(m.content) for m in q["memories"]]
        context = [(stems[i - 1] if i > 0 and loc[i - 1] == loc[i] else [])
                   + (stems[i + 1] if i + 1 < len(stems) and loc[i + 1] == loc[i] else []) for i in range(len(stems))]
        return {"words": [text.words(m.content) for m in q["memories"]], "stems": stems, "context": context, "related": {}}

    return per_conversation(q, "fts rows", build)


def related_terms(q: dict, how: str, k: int) -> list[list[str]]:
    """Each memory's neighbour document as a fourth column: its `k` neighbours' stems (other
    locations; "exact" or "incremental" as in `neighbour_scores`)."""
    rows = _fts_rows(q)
    if (how, k) not in rows["related"]:
        groups = recall_replica.location_of(q)
        near = incremental_neighbours(q["M"], k, groups) if how == "incremental" else exact_neighbours(q["M"], k, False, groups)
        rows["related"][(how, k)] = [[t for j in row for t in rows["stems"][j]] for row in near]
    return rows["related"][(how, k)]


def emulated_lexical(q: dict, related: list[list[str]] | None, weight: float, context_weight: float = 0.5, k: int = 60,
                     k1: float = fts5rank.K1, b: float = fts5rank.B, idf_of=fts5rank.idf) -> list[tuple[int, float]]:
    """The tolerant leg's first `k` as FTS5 would rank them, with a fourth column `related`
    weighed `weight`: what building the neighbour documents into the store's own row would
    give. The sum is `fts5rank.row_score`'s, written out because that takes one weighted
    column beside the memory's own and this row has two. `k1`, `b` and `idf_of` are FTS5's
    unless a row tries other BM25 parameters (the tenth round)."""
    rows = _fts_rows(q)
    n = len(q["memories"])
    related = related or [[] for _ in range(n)]
    terms = text.query_terms(q["text"], strict=False)
    length = [len(rows["words"][i]) + len(rows["stems"][i]) + len(rows["context"][i]) + len(related[i]) for i in range(n)]
    avgdl = sum(length) / n
    present = [set(rows["stems"][i]) | set(rows["context"][i]) | set(related[i]) for i in range(n)]
    idf = {t: idf_of(n, sum(t in p for p in present)) for t in terms}
    hits = []
    for i in range(n):
        if present[i].isdisjoint(terms):
            continue
        norm = k1 * (1 - b + b * length[i] / avgdl)
        score = 0.0
        for t, w in idf.items():
            f = rows["stems"][i].count(t) + context_weight * rows["context"][i].count(t) + weight * related[i].count(t)
            if f:
                score += w * (f * (k1 + 1.0)) / (f + norm)
        hits.append((i, score))
    return sorted(hits, key=lambda h: -h[1])[:k]


def leg_scores(q: dict, documents: list[list[str]]) -> np.ndarray:
    """BM25 (`fts5rank`'s formula over the store's own analysis) of the question against one
    extra document per memory (a list of `text.stems` terms): a leg as the store would index it."""
    terms = text.query_terms(q["text"], strict=False)
    avgdl = max(sum(map(len, documents)) / len(documents), 1e-9)
    present = [set(d) for d in documents]
    idf = {t: fts5rank.idf(len(documents), sum(t in p for p in present)) for t in terms}
    return np.array([fts5rank.row_score(idf, d, [], len(d), avgdl, 0.0) if not p.isdisjoint(terms) else 0.0
                     for d, p in zip(documents, present)])


def own_leg_scores(q: dict, how: str, k: int) -> np.ndarray:
    """The neighbour documents' leg (`neighbour_scores`) on the store's own analysis, without
    bm25s's English stop words and Lucene's BM25."""
    return leg_scores(q, related_terms(q, how, k))


def word_documents(q: dict, words: "semantic_pool.ModelWords", m: int, csls: bool) -> list[list[str]]:
    """doc2query with single words: the stems of each memory's `m` words of the conversation
    that, embedded as queries, score it highest, none sharing a stem with the memory (with
    `csls`, each word's score less its mean over its 10 best memories: a word that retrieves
    everything counts less)."""
    def build() -> list[list[str]]:
        vocab = [w for w in class_links.lexicon(q).vocab if w in words.row]
        S = q["M"] @ words.E[[words.row[w] for w in vocab]].T
        if csls:
            S = S - np.sort(S, axis=0)[-10:].mean(axis=0)
        stems = [text.stems(w) for w in vocab]
        documents = []
        for i, memory in enumerate(q["memories"]):
            own = set(text.stems(memory.content.split(":", 1)[-1]))
            picked = [j for j in np.argsort(-S[i]) if own.isdisjoint(stems[j])][:m]
            documents.append([t for j in picked for t in stems[j]])
        return documents

    return per_conversation(q, ("word documents", m, csls), build)


def print_word_documents(q: dict, words: "semantic_pool.ModelWords", n: int = 12) -> None:
    """What the model tags: the first `n` memories of a conversation and their 5 words."""
    print("| memory | its 5 words' stems |\n|---|---|")
    for memory, document in list(zip(q["memories"], word_documents(q, words, 5, False)))[:n]:
        print(f"| {memory.content[:80]} | {', '.join(document)} |")
    print()


def word_rows(words: "semantic_pool.ModelWords") -> dict:
    out = {}
    for csls in (False, True):
        for m in (5, 10):
            for w in (0.1, 0.2, 0.3):
                out[f"words that retrieve the memory: {m} a memory{', CSLS' if csls else ''}, weight {w:g}"] = (
                    lambda q, m=m, csls=csls, w=w: ranked(class_links.add_leg(fused(q), leg_scores(q, word_documents(q, words, m, csls)), w)))
    return out


def column_rows() -> dict:
    """The neighbour documents on the store's own analysis: built into the lexical leg's row
    (a fourth column), or as a leg of their own."""
    out = {**kept_row(), "emulated lexical leg (no fourth column)": lambda q: ranked(fused({**q, "lex": emulated_lexical(q, None, 0.0)}))}
    for how, k, w in (("exact", 10, 0.1), ("exact", 10, 0.2), ("exact", 10, 0.3), ("exact", 5, 0.2),
                      ("incremental", 5, 0.2), ("incremental", 10, 0.2)):
        out[f"fourth column: {how}, {k} nearest (other locations), weight {w:g}"] = (
            lambda q, how=how, k=k, w=w: ranked(fused({**q, "lex": emulated_lexical(q, related_terms(q, how, k), w)})))
    for how, k, w in (("exact", 5, 0.2), ("exact", 5, 0.3), ("exact", 10, 0.2), ("exact", 10, 0.3), ("exact", 15, 0.2),
                      ("incremental", 5, 0.2), ("incremental", 10, 0.2)):
        out[f"own leg, store's analysis: {how}, {k} nearest (other locations), weight {w:g}"] = (
            lambda q, how=how, k=k, w=w: ranked(class_links.add_leg(fused(q), own_leg_scores(q, how, k), w)))
    return out


def frequent_words_out(questions: list[dict], share: float) -> list[str]:
    """Each question without the words (3+ letters) found in more than `share` of its
    conversation's memories."""
    df: dict[int, dict[str, float]] = {}
    out = []
    for q in questions:
        if q["conversation"] not in df:
            counts: dict[str, int] = {}
            for m in q["memories"]:
                for w in set(text.words(m.content)):
                    counts[w] = counts.get(w, 0) + 1
            df[q["conversation"]] = {w: c / len(q["memories"]) for w, c in counts.items()}
        common = df[q["conversation"]]
        kept = [t for t in q["text"].split() if not any(len(w) > 2 and common.get(w, 0) > share for w in text.words(t))]
        out.append(" ".join(kept) or q["text"])
    return out


def frequent_rows(cache: VectorCache, questions: list[dict]) -> dict:
    """The question vector without the store's most common words, instead of or mixed 1:1
    with the whole question's vector."""
    rows = {}
    for share in (0.1, 0.3):
        texts = frequent_words_out(questions, share)
        vectors = {q["text"]: cache.embed_query(t) for q, t in zip(questions, texts)}

        def cosines(q: dict, mix: float, vectors=vectors) -> np.ndarray:
            v = mix * q["vector"] + (1 - mix) * vectors[q["text"]]
            return q["M"] @ (v / np.linalg.norm(v))

        for mix in (0.0, 0.5):
            label = "instead" if mix == 0 else "mixed 1:1"
            rows[f"question without words in > {share:g} of the store, {label}"] = (
                lambda q, mix=mix, cosines=cosines: ranked(fused(q, cosines(q, mix))))
    return rows


def rows(cache: VectorCache, questions: list[dict]) -> dict:
    out = kept_row()
    for d, p in ((1, 0.05), (1, 0.1), (1, 0.2), (2, 0.05), (3, 0.05)):
        out[f"adjacent penalty: distance {d}, {p:g}"] = lambda q, d=d, p=p: adjacent_penalty(q, fused(q), d, p)
    for t in (0.6, 0.7):
        out[f"adjacent penalty: distance 1, 0.1, only when flatness > {t:g}"] = (
            lambda q, t=t: (lambda s: adjacent_penalty(q, s, 1, 0.1) if flatness(s) > t else ranked(s))(fused(q)))
    for size in (10, 20, 40):
        for w in (0.1, 0.2):
            out[f"topic clusters: {size} turns a cluster, weight {w:g}"] = lambda q, size=size, w=w: topic_clusters(q, size, w)
    for p in (0.1, 0.2, 0.3):
        out[f"interrogative prior: {p:g}"] = lambda q, p=p: interrogative(q, p)
    for how in ("cosine", "csls", "incremental"):
        for other in (False, True):
            for k in (5, 10, 15):
                for w in (0.15, 0.2, 0.25):
                    where = "other locations" if other else "all"
                    out[f"neighbour documents: {how}, {k} nearest ({where}), weight {w:g}"] = (
                        lambda q, how=how, k=k, other=other, w=w: neighbour_leg(q, how, k, other, w))
    for k in (5, 10):
        for w in (0.1, 0.2):
            out[f"neighbour vote at query time: {k} nearest, weight {w:g}"] = lambda q, k=k, w=w: neighbour_vote(q, k, w)
    out.update(frequent_rows(cache, questions))
    return out


FAMILIES = ("adjacent penalty", "topic clusters", "interrogative prior", "neighbour documents: cosine",
            "neighbour documents: csls", "neighbour documents: incremental", "neighbour vote", "question without")


def report_by_family(questions: list[dict], table: dict, families: tuple[str, ...]) -> list[tuple]:
    """The table (`sparse_terms.report`), then the halves rule over all rows and within each family
    (rows whose name starts with it, beside the first row); returns the report's rows."""
    found = sparse_terms.report(questions, table)
    for family in ("",) + families:
        among = [found[0]] + [r for r in found[1:] if r[0].startswith(family)]
        best, per_half = recall_replica.halves_rule(among)
        print(f"\n{family or 'all rows'}: best overall: {best}; best on each half: {per_half}; "
              + ("the halves agree" if per_half == [best, best] else "the halves DISAGREE"))
    return found


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--words", action="store_true", help="only the words that retrieve each memory (embeds the split's ~4,200 words)")
    p.add_argument("--store-analysis", action="store_true",
                   help="only the neighbour documents on the store's own analysis: a fourth column of the lexical row, or their own leg")
    args = p.parse_args()
    cache = recall_replica.open_cache(args.cache)
    questions = recall_replica.collect(args.data, cache)
    if args.words:
        words = semantic_pool.ModelWords(cache, questions)
        table = {**kept_row(), **word_rows(words)}
        families: tuple[str, ...] = ("words that retrieve",)
        print_word_documents(questions[0], words)
    elif args.store_analysis:
        table, families = column_rows(), ("fourth column", "own leg")
    else:
        table, families = rows(cache, questions), FAMILIES
    cache.save()
    report_by_family(questions, table, families)


if __name__ == "__main__":
    main()
