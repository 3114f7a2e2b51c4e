"""How many generated cases each property test ran, printed at the end of the session
(`pytest_terminal_summary` in conftest.py) and saved with the short load run's report
under `FIGURES`, so a run shows, and keeps, what it actually covered."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

COUNTS: Counter[str] = Counter()

# `make test` leaves its figures here (bench-out/ is not committed); XMEMO_TEST_FIGURES moves them
FIGURES = Path(os.environ.get("XMEMO_TEST_FIGURES") or Path(__file__).resolve().parents[2] / "bench-out" / "tests")


def record(name: str, n: int = 1) -> None:
    COUNTS[name] += n
