"""The multilingual check run next to LoCoMo: French and Korean memories and questions
(`tests/data/multilingual.json`), read as one more corpus so the same paths score it.

Format: `{"memories": [{"id", "lang", "content"}], "questions": [{"lang", "query",
"expected": [ids]}]}`; a question's `lang` is its category in the report."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .data import Conversation, Question, Turn

DEFAULT_PATH = Path("tests/data/multilingual.json")
_START = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def load(path: str | Path) -> Conversation:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conv = Conversation("multilingual")
    for i, m in enumerate(data["memories"]):
        conv.turns.append(Turn(m["id"], m["content"], f"multilingual/{m['lang']}", _START + timedelta(minutes=i)))
    known = {t.dia_id for t in conv.turns}
    for q in data["questions"]:
        missing = set(q["expected"]) - known
        if missing or not q["expected"]:
            raise ValueError(f"question {q['query']!r} expects unknown memories {sorted(missing)}")
        conv.questions.append(Question(q["query"], tuple(q["expected"]), q["lang"]))
    return conv
