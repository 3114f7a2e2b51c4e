"""Shared helpers of the benchmarks: percentiles, saving JSON and markdown reports."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of `values`; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def latency_summary(ms: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 3),
        "p95_ms": round(percentile(ms, 95), 3),
        "p99_ms": round(percentile(ms, 99), 3),
    }


def cell(value: Any) -> str:
    """A figure as a table shows it: a float to three decimals, nothing measured as a dash."""
    return "–" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    line = lambda cells: "| " + " | ".join(str(c) for c in cells) + " |"  # noqa: E731
    return "\n".join([line(headers), line(["---"] * len(headers)), *(line(r) for r in rows)]) + "\n"


def save(out: Path | None, name: str, data: dict[str, Any], markdown: str | None = None) -> None:
    """Write `<out>/<name>.json` (and `.md`) and say where."""
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if markdown is not None:
        (out / f"{name}.md").write_text(markdown)
    print(f"saved {out / (name + '.json')}" + (f" and {name}.md" if markdown else ""))
