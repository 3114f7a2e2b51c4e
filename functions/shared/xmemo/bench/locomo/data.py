"""Reading a LoCoMo-format file (the public release's JSON) into plain records.

Any file in the same format works: a list of samples, each with `conversation`
(`session_N` turn lists and `session_N_date_time`) and `qa` (question, evidence, category)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}  # 5 (adversarial) has no evidence

_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class Turn:
    """One memory to store: `dia_id` is what questions cite as evidence."""

    dia_id: str
    content: str
    location: str | None  # None: the default location
    at: datetime  # LoCoMo: the session date plus one second per turn, so turns keep their order


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]
    category: str


@dataclass
class Conversation:
    """One corpus with its questions; every conversation gets its own store and owner."""

    name: str
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


def parse_date(value: str) -> datetime:
    """`1:56 pm on 8 May, 2023` (LoCoMo's session date) as a UTC datetime."""
    cleaned = re.sub(r"\s+", " ", value.strip())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise ValueError(f"unrecognised session date {value!r}")


def _evidence(raw) -> tuple[str, ...]:
    """Evidence ids as given, with the few `"D8:6; D9:17"` entries split into two."""
    out: list[str] = []
    for item in raw or ():
        out.extend(e for e in _EVIDENCE_SPLIT.split(str(item)) if e)
    return tuple(dict.fromkeys(out))


def turn_content(turn: dict, captions: bool = False) -> str:
    """`speaker: text`; with `captions`, a shared image's caption follows as LoCoMo's own
    retrieval evaluation renders it (`[shares a photo of ...]`, snap-research/locomo
    task_eval/dpr_qa.py): 758 of the dev split's 3,435 turns carry one (222 of them
    without the image's URL, which the caption stands in for anyway)."""
    content = f"{turn['speaker']}: {turn['text']}"
    if captions and turn.get("blip_caption"):
        content += f" [shares {turn['blip_caption']}]"
    return content


def parse_sample(sample: dict, captions: bool = False) -> Conversation:
    conv = sample["conversation"]
    name = str(sample.get("sample_id", "sample"))
    out = Conversation(name)
    sessions = sorted(
        (int(m.group(1)), key) for key in conv if (m := _SESSION.fullmatch(key)) and isinstance(conv[key], list)
    )
    for number, key in sessions:
        start = parse_date(conv[f"{key}_date_time"])
        for i, turn in enumerate(conv[key]):
            out.turns.append(Turn(turn["dia_id"], turn_content(turn, captions), f"conversations/locomo/{name}/{key}", start + timedelta(seconds=i)))
    for qa in sample.get("qa", ()):
        category = int(qa.get("category", 0))
        if category in CATEGORIES:
            evidence = _evidence(qa.get("evidence"))
            if evidence:
                out.questions.append(Question(qa["question"], evidence, str(category)))
    return out


def load(path: str | Path, captions: bool = False) -> list[Conversation]:
    """The file's conversations; `captions`: image captions in the turns (`turn_content`)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):  # a single sample
        data = [data]
    return [parse_sample(s, captions) for s in data]
