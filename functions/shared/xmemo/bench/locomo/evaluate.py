"""The evaluation loop: for each conversation, store its turns in XMemo and index them for
the baselines, then ask every question of all three systems and score the answers."""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ...config import Settings
from ...embedding import Embedder
from ...store.base import MemoryStore
from .abstention import FOREIGN_PER_CONVERSATION, NONSENSE_PER_CONVERSATION, Abstention, foreign_questions, nonsense_queries
from .baselines import BM25Baseline, DenseBaseline, pack_ranked
from .data import Conversation
from .metrics import BUDGETS, KS, SystemScores
from .sweep import Sweep
from .system import VectorCache, XMemoSystem

MAX_ITEMS = 50  # recall_context's upper bound: the budget, not the item count, limits the pack
RECALL_LIMIT = max(KS)  # recall's upper bound (20)
DEFAULT_BUDGET = 1500  # recall_context's default max_tokens


@dataclass
class Outcome:
    systems: dict[str, SystemScores] = field(default_factory=dict)
    recall_ms: list[float] = field(default_factory=list)
    context_ms: list[float] = field(default_factory=list)
    remember_ms: list[float] = field(default_factory=list)
    abstention: Abstention = field(default_factory=Abstention)
    turns: int = 0
    questions: int = 0
    seconds: float = 0.0


def evaluate(
    conversations: Sequence[Conversation],
    settings: Settings,
    embedder: Embedder | None,
    *,
    budgets: Sequence[int] = BUDGETS,
    progress: bool = True,
    label: str = "locomo",
    cache_dir: Path | None = None,
    abstention: bool = True,
    store: Callable[[Path], MemoryStore] | None = None,
    sweep: Sweep | None = None,
) -> Outcome:
    """Run XMemo and the baselines over `conversations` (each in a fresh store).

    Latency: every `recall` pays for its query embedding, and so does the first
    `recall_context` of each question (at the default budget, timed); the other budgets
    reuse that vector and are not timed. With `abstention`, each store is also asked
    foreign questions and nonsense (untimed), to count how often nothing comes back; with
    `sweep` as well, all of them again under each pair of floors of its grid (untimed).
    `store(folder)` makes each conversation's fresh store (default: SQLite in `folder`)."""
    from tqdm import tqdm

    started = time.perf_counter()
    cache = VectorCache(embedder, cache_dir) if embedder is not None else None
    budget_order = sorted(budgets, key=lambda b: b != DEFAULT_BUDGET)
    names = ["xmemo", "bm25"] + (["dense"] if cache is not None else [])
    out = Outcome(systems={n: SystemScores() for n in names})
    total = sum(len(c.turns) * (2 if cache else 1) + len(c.questions) for c in conversations)
    bar = tqdm(total=total, desc=label, unit="step", disable=not progress, leave=False)
    pack_args = dict(max_items=MAX_ITEMS, encoding=settings.encoding, min_useful_tokens=settings.min_useful_tokens)
    try:
        for number, conv in enumerate(conversations):
            contents = [t.content for t in conv.turns]
            bar.set_postfix_str(f"{conv.name}: embedding")
            if cache is not None:
                cache.prime(contents, progress=bar)
            with tempfile.TemporaryDirectory(prefix="xmemo-bench-") as tmp:
                system = XMemoSystem(
                    settings, cache, Path(tmp), owner=f"bench-{number}-{conv.name}", store=store(Path(tmp)) if store else None
                )
                try:
                    bar.set_postfix_str(f"{conv.name}: remember")
                    for turn in conv.turns:
                        system.remember(turn)
                        bar.update(1)
                    bm25 = BM25Baseline(contents)
                    dense = DenseBaseline(cache.embed_passages(contents)) if cache is not None else None
                    bar.set_postfix_str(f"{conv.name}: questions")
                    for q in conv.questions:
                        if cache is not None:
                            cache.forget_query(q.text)
                        ranked = system.recall(q.text, RECALL_LIMIT)
                        if cache is not None:
                            cache.forget_query(q.text)
                        packs = {b: system.context(q.text, MAX_ITEMS, b, timed=b == budget_order[0]) for b in budget_order}
                        out.systems["xmemo"].add(q.category, q.evidence, ranked, packs)
                        _score_baseline(out.systems["bm25"], q, bm25.rank(q.text, MAX_ITEMS), conv, budgets, pack_args)
                        if dense is not None:
                            order = dense.rank(cache.embed_query(q.text), MAX_ITEMS)
                            _score_baseline(out.systems["dense"], q, order, conv, budgets, pack_args)
                        bar.update(1)
                    foreign: list[str] = []
                    nonsense: list[str] = []
                    if abstention:
                        bar.set_postfix_str(f"{conv.name}: foreign and nonsense questions")
                        rng = random.Random(f"{label}-{number}")
                        foreign = foreign_questions(conversations, number, rng, FOREIGN_PER_CONVERSATION)
                        nonsense = nonsense_queries(rng, NONSENSE_PER_CONVERSATION)
                        for kind, queries in (("foreign", foreign), ("nonsense", nonsense)):
                            for text in queries:
                                out.abstention.add(kind, system.recall(text, RECALL_LIMIT, timed=False))
                                if cache is not None:
                                    cache.forget_query(text)
                    if sweep is not None:
                        bar.set_postfix_str(f"{conv.name}: sweeping the relevance floors")
                        forget = cache.forget_query if cache is not None else (lambda _text: None)
                        sweep.ask(system, label, conv.questions, foreign, nonsense, forget)
                finally:
                    system.close()
            out.recall_ms += system.recall_ms
            out.context_ms += system.context_ms
            out.remember_ms += system.remember_ms
            out.turns += len(conv.turns)
            out.questions += len(conv.questions)
    finally:
        bar.close()
        if cache is not None:
            cache.save()
    out.seconds = time.perf_counter() - started
    return out


def _score_baseline(scores: SystemScores, q, order: list[int], conv: Conversation, budgets, pack_args) -> None:
    ids = [[conv.turns[i].dia_id] for i in order]
    contents = [conv.turns[i].content for i in order]
    packs = {}
    for b in budgets:
        positions, used = pack_ranked(contents, max_tokens=b, **pack_args)
        packs[b] = ([ids[p] for p in positions], used)
    scores.add(q.category, q.evidence, ids[:RECALL_LIMIT], packs)
