"""How many generated cases each property test ran, printed at the end of the session
(`pytest_terminal_summary` in conftest.py) and saved with the short load run's report
under `FIGURES`, so a run shows, and keeps, what it actually covered."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

COUNTS: Counter[str] = Counter()

# `make test` leaves its figures here (bench-out/tests/ is not committed); XMEMO_TEST_FIGURES moves them
FIGURES = Path(os.environ.get("XMEMO_TEST_FIGURES") or Path(__file__).resolve().parents[2] / "bench-out" / "tests")


def record(name: str, n: int = 1) -> None:
    COUNTS[name] += n


class Tally:
    """The cases one test itself ran. A test's count assertion reads its own tally, never
    `COUNTS` (which every test shares), so it fails when nothing ran, whatever ran before
    it or in which order; each case is added to `COUNTS` as well, for the summary."""

    def __init__(self, name: str):
        self.name, self.n = name, 0

    def add(self, n: int = 1) -> None:
        self.n += n
        record(self.name, n)
