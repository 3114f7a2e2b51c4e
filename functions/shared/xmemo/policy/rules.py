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
    group: int | str | Callable[[re.Match[str]], str] = 0  # the part of the match that is the secret
    check: Check | None = None
    anchors: tuple[str, ...] = field(default=())

    def spans(self, text: str, lowered: str) -> Iterator[tuple[int, int]]:
        if self.anchors and not any(a in lowered for a in self.anchors):
            return
        for m in scan(self.pattern, text, self.check):
            start, end = m.span(self.group(m) if callable(self.group) else self.group)
            if end > start:
                yield start, end


def scan(pattern: re.Pattern[str], text: str, check: Check | None) -> Iterator[re.Match[str]]:
    """The accepted matches. After a rejected match the search resumes just past its start,
    not its end: a rejected `deploy: SECRET_KEY` must not hide `SECRET_KEY = '…'`."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        if check is None or check(m):
            yield m
            pos = max(m.end(), m.start() + 1)
        else:
            pos = m.start() + 1
