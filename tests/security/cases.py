"""How many generated cases each property test ran, printed at the end of the session
(`pytest_terminal_summary` in conftest.py), so a run shows what it actually covered."""

from __future__ import annotations

from collections import Counter

COUNTS: Counter[str] = Counter()


def record(name: str, n: int = 1) -> None:
    COUNTS[name] += n
