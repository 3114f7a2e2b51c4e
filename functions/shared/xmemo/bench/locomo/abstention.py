"""What the benchmark asks beside LoCoMo's own questions, to see whether `recall` dares to
answer with nothing: *foreign* questions (another conversation's questions, asked of this
conversation's store: mostly about people and events it never mentions) and generated
nonsense. Both go through the real `recall`; an empty result counts as abstaining."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field
from typing import Sequence

from .data import Conversation

FOREIGN_PER_CONVERSATION = 100
# every setting that lets `recall` answer with nothing, switched off: what each bench's
# "floors off" reference row asks for (the relevance floors, then the evidence gates)
ABSTENTION_OFF = {
    "semantic_floor": -1.0,
    "relevance_floor": -1.0,
    "unknown_words_floor": -1.0,
    "unknown_names_floor": -1.0,
    "evidence_floor": -1.0,
    "small_evidence_floor": -1.0,
    "match_floor": -1.0,
}
NONSENSE_PER_CONVERSATION = 40


def nonsense_queries(rng: random.Random, n: int) -> list[str]:
    """One to three random lowercase 'words' of 4-9 letters: no language, no meaning."""
    def word() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(4, 9)))

    return [" ".join(word() for _ in range(rng.randint(1, 3))) for _ in range(n)]


def foreign_questions(conversations: Sequence[Conversation], own: int, rng: random.Random, n: int) -> list[str]:
    """Up to `n` scored questions (categories 1-4) of the other conversations of the run."""
    pool = [q.text for i, c in enumerate(conversations) if i != own for q in c.questions if q.category != "5"]
    rng.shuffle(pool)
    return pool[:n]


@dataclass
class Abstention:
    asked: dict[str, int] = field(default_factory=lambda: {"foreign": 0, "nonsense": 0})
    empty: dict[str, int] = field(default_factory=lambda: {"foreign": 0, "nonsense": 0})

    def add(self, kind: str, results: Sequence) -> None:
        self.asked[kind] += 1
        self.empty[kind] += not results

    def summary(self) -> dict[str, dict[str, float | int]]:
        return {
            kind: {"questions": self.asked[kind], "empty_share": round(self.empty[kind] / self.asked[kind], 3) if self.asked[kind] else 0.0}
            for kind in self.asked
        }
