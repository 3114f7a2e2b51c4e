"""The standard retrieval measures, kept apart from the run so they are unit-tested.

recall@k: the fraction of a question's evidence turns among the top k results;
coverage@budget: the fraction of its evidence turns inside the packed context.
Both are averaged over questions. A result may stand for several turns (identical
turns are stored once), so each result is a set of dia_ids."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from statistics import fmean
from typing import Collection, Iterable, Sequence

KS = (1, 5, 10, 20)
BUDGETS = (500, 1000, 1500, 3000)


def found(results: Iterable[Collection[str]], evidence: Collection[str]) -> float:
    """Fraction of `evidence` present in any of `results`."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    seen: set[str] = set()
    for ids in results:
        seen.update(ids)
    return len(wanted & seen) / len(wanted)


def recall_at_k(ranked: Sequence[Collection[str]], evidence: Collection[str], k: int) -> float:
    return found(ranked[:k], evidence)


@dataclass
class SystemScores:
    """Per-question figures of one system, summarised overall and per category."""

    recall: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    coverage: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    tokens: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    categories: list[str] = field(default_factory=list)

    def add(
        self,
        category: str,
        evidence: Collection[str],
        ranked: Sequence[Collection[str]],
        packs: dict[int, tuple[Sequence[Collection[str]], int]],
    ) -> None:
        """`ranked`: the ranked results; `packs`: budget → (packed results, tokens used)."""
        self.categories.append(category)
        for k in KS:
            self.recall[k].append(recall_at_k(ranked, evidence, k))
        for budget, (packed, used) in packs.items():
            self.coverage[budget].append(found(packed, evidence))
            self.tokens[budget].append(used)

    def summary(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for k in KS:
            out[f"recall@{k}"] = _mean(self.recall[k])
        for b in sorted(self.coverage):
            out[f"coverage@{b}"] = _mean(self.coverage[b])
        for b in sorted(self.tokens):
            out[f"tokens@{b}"] = round(fmean(self.tokens[b]), 1) if self.tokens[b] else 0.0
        return out

    def by_category(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for cat in sorted(set(self.categories)):
            idx = [i for i, c in enumerate(self.categories) if c == cat]
            row: dict[str, float] = {"questions": len(idx)}
            for k in KS:
                row[f"recall@{k}"] = _mean([self.recall[k][i] for i in idx])
            for b in sorted(self.coverage):
                row[f"coverage@{b}"] = _mean([self.coverage[b][i] for i in idx])
            out[cat] = row
        return out


def _mean(values: Sequence[float]) -> float:
    return round(fmean(values), 4) if values else 0.0
