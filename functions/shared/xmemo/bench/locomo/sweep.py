"""The curve the default relevance floors are chosen from (`xmemo bench locomo --sweep`):
for each row of floors in a grid (semantic, relevance, unknown words, unknown names), recall of each
corpus's own questions (LoCoMo at 10, the French/Korean check at 5, the seeds' small
stores at 3) and the share of foreign questions and nonsense that `recall` answers with
nothing. Each store is asked every query once per row, through
the real `recall` with that row's settings; each query is embedded once for the grid.

The choice rule, applied to the summed curve: nonsense must be empty every time (on the
LoCoMo stores and the seeds' small ones), LoCoMo recall@10 may lose at most
`MAX_RECALL_LOSS`, and the French/Korean recall@5 and the seeds' recall@3 nothing,
against the floors switched off (the first row); among the rows that qualify, the one
that answers the most foreign questions with nothing (then the higher recall@10) wins.
Rows equal on both form a plateau (floors that change nothing measured); the tied row
nearest to each floor's median over the plateau (the lower median when even) is chosen,
so the default keeps room on both sides instead of sitting at the plateau's edge."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .abstention import ABSTENTION_OFF
from .metrics import recall_at_k

FLOORS = ("semantic_floor", "relevance_floor", "unknown_words_floor", "unknown_names_floor")
# one value per name of FLOORS; the first row is the reference: every abstention setting off
# (`ABSTENTION_OFF`, the evidence gates too); the swept rows keep the gates at their defaults
GRID: tuple[tuple[float, ...], ...] = (
    (-1.0, -1.0, -1.0, -1.0),
    (0.065, 0.09, 0.085, -1.0),
    (0.07, 0.09, 0.085, -1.0),
    (0.075, 0.09, 0.085, -1.0),
    (0.07, 0.09, 0.085, 0.10),
    (0.07, 0.09, 0.085, 0.11),
    (0.07, 0.09, 0.085, 0.12),
    (0.07, 0.09, 0.085, 0.14),
)
MAX_RECALL_LOSS = 0.01
K = {"locomo": 10, "multilingual": 5, "seeds": 3}  # the recall each corpus is held to


@dataclass
class _Row:
    recall: dict[str, list[float]] = field(default_factory=dict)
    asked: dict[str, int] = field(default_factory=lambda: {"foreign": 0, "nonsense": 0})
    empty: dict[str, int] = field(default_factory=lambda: {"foreign": 0, "nonsense": 0})


@dataclass
class Sweep:
    grid: Sequence[tuple[float, ...]] = GRID
    rows: dict[tuple[float, ...], _Row] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rows = {floors: _Row() for floors in self.grid}

    def ask(
        self, system, corpus: str, own: Sequence, foreign: Sequence[str], nonsense: Sequence[str], forget: Callable[[str], None]
    ) -> None:
        """Every query of one store (`system`: an `XMemoSystem` of `corpus`) under every row."""
        base = system.svc.retrieval
        k = K[corpus]
        try:
            for kind, queries in (("own", own), ("foreign", foreign), ("nonsense", nonsense)):
                for q in queries:
                    text = q.text if kind == "own" else q
                    for floors, row in self.rows.items():
                        off = ABSTENTION_OFF if floors == self.grid[0] else {}
                        system.svc.retrieval = base.model_copy(update={**dict(zip(FLOORS, floors)), **off})
                        ranked = system.recall(text, k, timed=False)
                        if kind == "own":
                            row.recall.setdefault(corpus, []).append(recall_at_k(ranked, q.evidence, k))
                        else:
                            row.asked[kind] += 1
                            row.empty[kind] += not ranked
                    forget(text)
        finally:
            system.svc.retrieval = base

    def summary(self) -> dict[str, Any]:
        rows = [
            {
                **dict(zip(FLOORS, floors)),
                **{f"{corpus}_recall@{K[corpus]}": round(sum(v) / len(v), 4) for corpus, v in r.recall.items() if v},
                **{f"{kind}_empty": round(r.empty[kind] / r.asked[kind], 3) if r.asked[kind] else 0.0 for kind in r.asked},
            }
            for floors, r in self.rows.items()
        ]
        return {"rows": rows, "chosen": choose(rows), "max_recall_loss": MAX_RECALL_LOSS}


def choose(rows: Sequence[dict[str, Any]], max_loss: float = MAX_RECALL_LOSS) -> dict[str, float] | None:
    """The floors the rule picks (module docstring); None if no row qualifies."""
    main, kept = "locomo_recall@10", ("multilingual_recall@5", "seeds_recall@3")
    ref = rows[0]

    def fits(r: dict[str, Any]) -> bool:
        return (
            r["nonsense_empty"] >= 1.0
            and r[main] >= ref[main] - max_loss - 1e-9
            and all(r[k] >= ref[k] - 1e-9 for k in kept if k in ref)
        )

    fit = [r for r in rows[1:] if fits(r)]
    if not fit:
        return None
    top = max((r["foreign_empty"], r[main]) for r in fit)
    tied = [r for r in fit if (r["foreign_empty"], r[main]) == top]
    middle = {n: sorted(r[n] for r in tied)[(len(tied) - 1) // 2] for n in FLOORS}  # each floor's (lower) median
    best = min(tied, key=lambda r: sum(abs(r[n] - middle[n]) for n in FLOORS))  # the middle of a plateau, not its edge
    return {name: best[name] for name in FLOORS}
