"""How should the semantic leg's fetched pool be used (hub measure, union scoring, score scaling)?

Usage (with a vector cache from `xmemo bench locomo --cache DIR`):
    .venv/bin/python -m research semantic-pool --data ../shared/data/locomo/locomo_dev.json --cache DIR

Since the sixth round the semantic leg fetches a pool (4 × its candidates) to measure
hubness, then keeps 60. Three things about that pool were open: (1) the hub measure
itself (CSLS's mean of the k nearest, against a per-memory z-score, as in mutual
proximity, Schnitzer et al. 2012); (2) whether a lexical candidate that sits in the pool
but below the kept 60 should bring its semantic score to fusion instead of none (scoring
the union of the legs); (3) how each leg's scores are scaled before they are added (min-max
over the kept hits, over the whole pool, or a z-score). Also tried: taking the common
directions out of the vectors first ("all but the top"), leg weights that follow each
leg's confidence per query, the question embedded as a passage, and (`--words`) the
fourth round's class → member expansion leg with our own model's word vectors in place of
GloVe's. Each row is a variant of `recall`'s ranking (`recall_replica.fused` is its first row,
rebuilt here by `ranking`); the halves rule of `recall_replica.grid` decides."""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xmemo.retrieval.fusion import Ranked, boost_groups, hubness
from . import recall_replica, class_links, sparse_terms
from .recall_replica import SETTINGS, ranked
from xmemo.bench.locomo.system import VectorCache


@dataclass(frozen=True)
class Variant:
    measure: str = "csls"  # "csls" (mean of k nearest), "mean" (of the whole pool), "zscore" (per memory, over the pool), "none"
    union: bool = False  # lexical candidates found in the pool bring their semantic score
    scale: str = "kept"  # min-max over the kept hits, "pool": over the pool, "z": z-score over the kept
    keep: int = SETTINGS.semantic_candidates
    pool: int = SETTINGS.hub_pool * SETTINGS.semantic_candidates
    weight: float = SETTINGS.hub_weight
    neighbours: int = SETTINGS.hub_neighbours
    adaptive: float = 0.0  # each leg's weight times (its peakedness / the other's) ** adaptive
    abtt: int = 0  # "all but the top": the pool's mean and its first `abtt` principal directions taken out first
    abtt_over: str = "pool"  # ... of the pool, or of the conversation's whole "store"


def peakedness(scaled: np.ndarray, n: int = 10) -> float:
    """How far a leg's best stands above its next `n` (scores scaled 0..1, best first): near 1
    when one hit stands out, near 0 when the first `n` are alike."""
    top = np.sort(scaled)[::-1][: n + 1]
    return float(top[0] - top[1:].mean()) if len(top) > 1 else 1.0


def adjusted(q: dict, v: Variant) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pool's rows (best cosine first), their raw cosines (what the floors judge) and
    their adjusted scores (what chooses and weighs the kept hits)."""
    cos = q["M"] @ q["vector"]
    rows = np.argsort(-cos, kind="stable")[: v.pool]
    raw = cos[rows]
    P, score = q["M"][rows], raw
    if v.abtt:
        P, query = all_but_the_top(P, q["vector"], q["M"] if v.abtt_over == "store" else P, v.abtt)
        score = P @ query
    if v.measure == "none" or v.weight <= 0:
        return rows, raw, score.copy()
    if v.measure == "csls":
        return rows, raw, score - v.weight * hubness(P, v.neighbours)
    near = P @ P.T
    np.fill_diagonal(near, np.nan)
    mu, sd = np.nanmean(near, axis=1), np.nanstd(near, axis=1)
    return rows, raw, (score - v.weight * mu if v.measure == "mean" else (score - mu) / np.maximum(sd, 1e-6))


_DIRECTIONS: dict = {}


def all_but_the_top(P: np.ndarray, query: np.ndarray, population: np.ndarray, d: int) -> tuple[np.ndarray, np.ndarray]:
    """`P` and `query` with the population's mean and first `d` principal directions taken
    out, renormalised (Mu and Viswanath, 2018: the common directions every vector shares)."""
    key = (id(population), d)
    if key not in _DIRECTIONS or population is P:  # a conversation's store: once; a pool: every query
        mu = population.mean(axis=0)
        _, _, vt = np.linalg.svd(population - mu, full_matrices=False)
        _DIRECTIONS[key] = (mu, vt[:d])
    mu, U = _DIRECTIONS[key]

    def strip(X):
        X = X - mu
        X = X - (X @ U.T) @ U
        return X / np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), 1e-12)

    return strip(P), strip(query)


def _scaled(values: np.ndarray, reference: np.ndarray, how: str) -> np.ndarray:
    if how == "z":
        sd = reference.std()
        return (values - reference.mean()) / sd if sd > 0 else np.ones_like(values)
    lo, hi = reference.min(), reference.max()
    return (values - lo) / (hi - lo) if hi > lo else np.ones_like(values)


def ranking(q: dict, v: Variant, settings=SETTINGS) -> list[int]:
    """`recall`'s ranking (lexical leg trusted, as in the replica) with variant `v` of the
    semantic leg: what `retrieval.fuse` and `boost_groups` compute when `v` is the default."""
    rows, raw, adj = adjusted(q, v)
    order = np.argsort(-adj, kind="stable")
    kept = order[: v.keep]
    floor_ok = raw - q["base"] >= settings.semantic_floor
    lex_rows = [i for i, _ in q["lex"]]
    lex_scores = np.array([s for _, s in q["lex"]], dtype=np.float64)
    score: dict[int, float] = {i: 0.0 for i in lex_rows}
    for j in kept:
        if floor_ok[j] or int(rows[j]) in score:
            score.setdefault(int(rows[j]), 0.0)
    reference = adj[kept] if v.scale != "pool" else adj
    lexical_weight, semantic_weight = settings.lexical_weight, settings.semantic_weight
    if v.adaptive and len(lex_rows) > 1 and len(kept) > 1:
        pl, ps = peakedness(_scaled(lex_scores, lex_scores, "kept")), peakedness(_scaled(adj[kept], adj[kept], "kept"))
        if pl > 0 and ps > 0:
            lexical_weight *= (pl / ps) ** (v.adaptive / 2)
            semantic_weight *= (ps / pl) ** (v.adaptive / 2)
    if len(lex_rows):
        for i, s in zip(lex_rows, _scaled(lex_scores, lex_scores, "z" if v.scale == "z" else "kept")):
            score[i] += lexical_weight * float(s)
    semantic = list(kept)
    if v.union:
        in_kept = {int(rows[j]) for j in kept}
        pos = {int(r): j for j, r in enumerate(rows)}
        semantic += [pos[i] for i in lex_rows if i in pos and i not in in_kept]
    semantic = np.array(semantic, dtype=np.int64)
    if len(semantic):
        values = _scaled(adj[semantic], reference, v.scale)
        if v.scale != "z":
            values = np.clip(values, 0.0, None)
        for j, s in zip(semantic, values):
            if int(rows[j]) in score:
                score[int(rows[j])] += semantic_weight * float(s)
    memories = q["memories"]
    fused = sorted((Ranked(memories[i], s) for i, s in score.items()), key=lambda r: (-round(r.score, 12), -r.memory.created_at.timestamp()))
    row = {m.reference: i for i, m in enumerate(memories)}
    return ranked({row[r.memory.reference]: r.score for r in boost_groups(fused, settings.group_weight)})


VARIANTS: dict[str, Variant] = {
    "kept: CSLS over the pool (now `recall`)": Variant(),
    "no discount": Variant(measure="none"),
    **{f"semantic candidates kept {k}": Variant(keep=k) for k in (80, 100, 120)},
    **{f"union: lexical candidates in the pool scored, pool {p}x": Variant(union=True, pool=p * 60) for p in (4, 6)},
    "union, scaled over the pool": Variant(union=True, scale="pool"),
    "scaled over the pool (no union)": Variant(scale="pool"),
    "z-score fusion": Variant(scale="z"),
    "z-score fusion, union": Variant(scale="z", union=True),
    "hub measure: mean cosine to the whole pool": Variant(measure="mean"),
    "hub measure: per-memory z-score over the pool (mutual proximity)": Variant(measure="zscore"),
    "hub measure: per-memory z-score, union": Variant(measure="zscore", union=True),
    **{f"all but the top {d} ({over}), then CSLS": Variant(abtt=d, abtt_over=over) for d in (1, 3, 8) for over in ("pool", "store")},
    **{f"all but the top {d} ({over}), no CSLS": Variant(abtt=d, abtt_over=over, measure="none") for d in (1, 3) for over in ("pool", "store")},
    **{f"query-adaptive leg weights (peakedness ratio ** {a})": Variant(adaptive=a) for a in (0.5, 1.0, 2.0)},
}


class ModelWords:
    """The model's own vectors of single words (each embedded as a query), standing in for
    GloVe in `class_links.expansion`: a query word expands to the `n` store words nearest it by
    CSLS (cosine less the store word's hubness among all words), weight 1 each. The split's
    words are embedded and their hubness measured once; `nearest(n)` is the expansion."""

    def __init__(self, cache: VectorCache, questions: list[dict]):
        vocabulary = sorted({w for q in questions for w in class_links.words(q["text"])}
                            | {w for q in questions for m in q["memories"] for w in class_links.words(m.content.split(":", 1)[-1])})
        self.row = {w: i for i, w in enumerate(vocabulary)}
        E = np.stack([cache.embed_query(w) for w in vocabulary])
        self.E = E / np.linalg.norm(E, axis=1, keepdims=True)
        self.hub = hubness(self.E, 10)
        self._rows: dict[int, np.ndarray] = {}

    def csls(self, word: str) -> np.ndarray:
        """Every word's CSLS to `word` (its cosine less its own hubness)."""
        return self.E @ self.E[self.row[word]] - self.hub

    def nearest(self, n: int):
        """`class_links.expansion`'s `similar`: weight 1 for the `n` store words of the
        conversation nearest the query word (its own stem left out), 0 elsewhere."""

        def similar(lex: "class_links.Lexicon", word: str) -> np.ndarray | None:
            if word not in self.row:
                return None
            idx = self._rows.setdefault(id(lex), np.array([self.row[w] for w in lex.vocab]))
            c = self.csls(word)[idx]
            c[lex.stems == class_links._stem().stemWord(word)] = -np.inf
            out = np.zeros(len(idx), np.float32)
            out[np.argsort(-c)[:n]] = 1.0
            return out

        return similar


def print_word_pairs(words: ModelWords, cache: VectorCache, questions: list[dict], timed: int = 200) -> None:
    """Where the fourth round's class → member pairs land among all the split's words, by
    CSLS to the class word, with the class word's nearest eight (itself included); and what
    one word's embedding costs (the first `timed` words, embedded afresh, one at a time)."""
    vocabulary = list(words.row)
    start = time.perf_counter()
    for w in vocabulary[:timed]:
        cache.inner.embed_query(w)
    per_word = (time.perf_counter() - start) / min(timed, len(vocabulary)) * 1000
    print(f"\n{len(vocabulary)} words; embedding one word as a query: {per_word:.1f} ms (mean of {min(timed, len(vocabulary))})")
    counts = [len(set(class_links.words(q["text"]))) for q in questions]
    print(f"content words per question: median {np.median(counts):g}, 10th-90th percentile {np.percentile(counts, 10):g}-{np.percentile(counts, 90):g}")
    print("\n| class | member | CSLS rank among the split's words | the class word's nearest |\n|---|---|---|---|")
    for a, b in class_links.PAIRS:
        if a in words.row and b in words.row:
            c = words.csls(a)
            rank = int((c > c[words.row[b]]).sum())
            print(f"| {a} | {b} | {rank} | {', '.join(vocabulary[i] for i in np.argsort(-c)[:8])} |")
    print()


def word_rows(words: ModelWords) -> dict:
    """The model-word expansion leg (`ModelWords`) on top of `recall`'s ranking."""
    rows = {}
    for n in (1, 2, 3, 5):
        similar = words.nearest(n)
        for w in (0.1, 0.2, 0.3):
            rows[f"model word vectors: each question word's {n} nearest store words, leg weight {w}"] = (
                lambda q, similar=similar, w=w: ranked(class_links.add_leg(recall_replica.fused(q), class_links.expansion(q, similar, 0.5), w))
            )
    return rows


def passage_rows(cache: VectorCache, questions: list[dict]) -> dict:
    """The question embedded as a passage (no "query:" instruction), alone or mixed in."""
    vectors = cache.embed_passages([q["text"] for q in questions])
    for q, v in zip(questions, vectors):
        q["as_passage"] = v / np.linalg.norm(v)

    def mixed(q: dict, a: float) -> list[int]:
        v = (1 - a) * q["vector"] + a * q["as_passage"]
        return ranked(recall_replica.fused(dict(q, vector=v / np.linalg.norm(v))))

    return {f"question vector: {1 - a:g} x as a query + {a:g} x as a passage": (lambda q, a=a: mixed(q, a)) for a in (0.3, 0.5, 1.0)}


AXES = {"union": (False, True), "scale": ("kept", "pool", "z"), "keep": (60, 100)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--only", help="only the variants whose name holds this text (and the first row)")
    p.add_argument("--words", action="store_true", help="also the model-word expansion leg (embeds the ~4,200 words of the split)")
    args = p.parse_args()
    cache = recall_replica.open_cache(args.cache)
    questions = recall_replica.collect(args.data, cache)
    same = sum(ranked(recall_replica.fused(q))[:10] == ranking(q, Variant())[:10] for q in questions)
    print(f"check: the first row's top 10 equals `recall`'s replica on {same} of {len(questions)} questions\n")
    named = dict(VARIANTS)
    for values in itertools.product(*AXES.values()):
        named.setdefault(f"grid {dict(zip(AXES, values))}", Variant(**dict(zip(AXES, values))))
    rankers = {name: (lambda q, v=v: ranking(q, v)) for name, v in named.items()}
    rankers.update(passage_rows(cache, questions))
    if args.words:
        words = ModelWords(cache, questions)
        print_word_pairs(words, cache, questions)
        rankers.update(word_rows(words))
    cache.save()
    if args.only:
        rankers = {k: f for i, (k, f) in enumerate(rankers.items()) if i == 0 or args.only in k}
    rows = sparse_terms.report(questions, rankers)
    best, per_half = recall_replica.halves_rule(rows)
    print(f"\nbest overall: {best}; best on each half: {per_half}; " + ("the halves agree" if per_half == [best, best] else "the halves DISAGREE"))


if __name__ == "__main__":
    main()
