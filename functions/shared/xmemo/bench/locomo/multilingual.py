"""The small corpora run next to LoCoMo, read as one more conversation each so the same
paths score them: the French/Korean check (`tests/data/multilingual.json`, memories
grouped in a location per language) and the small stores the relevance floors are held
to (`tests/data/seeds*.json`, in the default location, as an agent's unrelated notes).

Format: `{"memories": [{"id", "lang", "content"}], "questions": [{"lang", "query",
"expected": [ids]}]}`; a question's `lang` is its category in the report."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .data import Conversation, Question, Turn

DEFAULT_PATH = Path("tests/data/multilingual.json")
SEEDS_PATHS = (Path("tests/data/seeds.json"), Path("tests/data/seeds-single.json"))
_START = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def load(path: str | Path, name: str = "multilingual", grouped: bool = True) -> Conversation:
    """`grouped`: each language's memories in one location (`<name>/<lang>`); otherwise
    in the default location."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    conv = Conversation(name)
    for i, m in enumerate(data["memories"]):
        location = f"{name}/{m['lang']}" if grouped else None
        conv.turns.append(Turn(m["id"], m["content"], location, _START + timedelta(minutes=i)))
    known = {t.dia_id for t in conv.turns}
    for q in data["questions"]:
        missing = set(q["expected"]) - known
        if missing or not q["expected"]:
            raise ValueError(f"question {q['query']!r} expects unknown memories {sorted(missing)}")
        conv.questions.append(Question(q["query"], tuple(q["expected"]), q["lang"]))
    return conv
