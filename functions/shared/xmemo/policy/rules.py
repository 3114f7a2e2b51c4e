"""A rule finds candidate secrets; its check (from `filters`) decides which are real.

`Rule.anchors` are lowercase literals one of which must occur in the text for the rule
to run at all: most notes hold none, so most rules cost one substring test."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

Check = Callable[[re.Match[str]], bool]


@dataclass(frozen=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0  # the part of the match that is the secret
    check: Check | None = None
    anchors: tuple[str, ...] = field(default=())

    def spans(self, text: str, lowered: str) -> Iterator[tuple[int, int]]:
        if self.anchors and not any(a in lowered for a in self.anchors):
            return
        for m in self.pattern.finditer(text):
            if self.check is None or self.check(m):
                start, end = m.span(self.group)
                if end > start:
                    yield start, end
