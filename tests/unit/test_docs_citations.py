"""Every figure in README.md and docs/ cites a saved report: each `bench-out/...` path they name
must exist in the repository (a report moved or left to git history breaks the citation), and
the README stays short enough to be read first."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Written by `make test` itself (generated security cases, the short load run, the console's
# screenshots) and never committed: named in the docs as where a run leaves them, not as reports.
RUN_OUTPUT = ("bench-out/tests", "bench-out/console")
CITATION = re.compile(r"bench-out/[A-Za-z0-9_./-]*")
README_MAX_LINES = 220


def cited_paths(text: str) -> set[str]:
    """The bench-out paths a document names; a placeholder (`pool-<N>`, `<benchmark>/`) keeps only
    the folders before it, and a sentence's full stop is not part of the path."""
    paths = set()
    for match in CITATION.finditer(text):
        path = match.group(0)
        if text[match.end() : match.end() + 1] in ("<", "{", "*"):
            path = path[: path.rfind("/") + 1]
        paths.add(path.rstrip(".").rstrip("/") or path)
    return paths


def test_cited_paths_read_placeholders_as_their_folder():
    text = "see bench-out/locomo/late-pool/pool-<N>/report.md, bench-out/<benchmark>/ and bench-out/load/load.md."
    assert cited_paths(text) == {"bench-out/locomo/late-pool", "bench-out", "bench-out/load/load.md"}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_cited_report_exists(doc):
    missing = sorted(
        path
        for path in cited_paths(doc.read_text(encoding="utf-8"))
        if not path.startswith(RUN_OUTPUT) and not (ROOT / path).exists()
    )
    assert not missing, f"{doc.name} cites bench-out paths that are not in the repository: {missing}"


def test_readme_stays_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; details belong in docs/"
