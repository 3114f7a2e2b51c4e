"""Small stores of LoCoMo's turns, for `xmemo bench smallstores --locomo FILE`: text and
questions nobody here wrote. Each store holds turns of one conversation, stored as plain
notes (no conversation location, so no neighbouring context): the evidence turns of some of
its questions, each answered by one turn, and other turns of it around them. Its own
questions should find their turn in the top 3; the questions of the file's other
conversations (about other people) should find nothing.

The data's licence and its README keep its text out of the repository, so a report names a
turn by its conversation and `dia_id` ("conv-26 D3:4") and a question by its conversation
and its place among that conversation's scored questions ("conv-26 question 17"): `cites`."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from .locomo.data import CATEGORIES, Conversation, load

QUESTIONS_PER_STORE = 3  # a store of n turns holds the evidence of max(1, n // 3) questions


@dataclass(frozen=True)
class Turn:
    """One stored turn and the questions it alone answers (what `smallstores.measure` asks)."""

    memory: str
    kind: str  # the questions' LoCoMo category ("single-hop", "temporal"...)
    questions: tuple[tuple[str, str], ...]  # (form, question)
    language: str = "en"


class LocomoStores:
    """Builds the stores of a LoCoMo-format file: `store` gives one store's turns and the
    questions of other conversations to ask it."""

    def __init__(self, path: Path):
        self.conversations: list[Conversation] = load(path)
        if len(self.conversations) < 2:
            raise ValueError(f"{path}: at least two conversations are needed (one's questions are asked of another's store)")
        self.cites: dict[str, str] = {t.content: f"{c.name} {t.dia_id}" for c in self.conversations for t in c.turns}
        self.cites.update({q.text: f"{c.name} question {i}" for c in self.conversations for i, q in enumerate(c.questions)})

    def store(self, rng: random.Random, size: int, unanswerable: int) -> tuple[list[Turn], dict[str, list[str]]]:
        """`size` turns of one conversation (chosen at random), holding the evidence of
        `size // QUESTIONS_PER_STORE` (at least one) of its single-turn questions, in random
        order; and `unanswerable` questions of the other conversations."""
        index = rng.randrange(len(self.conversations))
        conv = self.conversations[index]
        turns = {t.dia_id: t for t in conv.turns}
        answerable = [q for q in conv.questions if len(q.evidence) == 1 and q.evidence[0] in turns]
        chosen = rng.sample(answerable, min(len(answerable), max(1, size // QUESTIONS_PER_STORE)))
        evidence: dict[str, list[tuple[str, str]]] = {}
        for q in chosen:
            evidence.setdefault(q.evidence[0], []).append((CATEGORIES[int(q.category)], q.text))
        others = [t for t in conv.turns if t.dia_id not in evidence]
        picked = [turns[d] for d in evidence] + rng.sample(others, min(len(others), size - len(evidence)))
        rng.shuffle(picked)
        stored = [
            Turn(t.content, evidence[t.dia_id][0][0] if t.dia_id in evidence else "", tuple(("locomo", text) for _, text in evidence.get(t.dia_id, ())))
            for t in picked
        ]
        foreign = [q.text for i, c in enumerate(self.conversations) if i != index for q in c.questions]
        return stored, {"other_conversation": rng.sample(foreign, min(len(foreign), unanswerable))}
