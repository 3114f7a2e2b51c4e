"""`python -m research` lists the experiments; `python -m research NAME [args]` runs one."""

from __future__ import annotations

import importlib
import sys

# name -> module under research.locomo; the question each answers is its module's docstring
EXPERIMENTS = {
    "recall-replica": "recall_replica",
    "class-links": "class_links",
    "sparse-terms": "sparse_terms",
    "semantic-pool": "semantic_pool",
    "breadth": "breadth",
    "world-knowledge": "world_knowledge",
    "bm25-prefixes": "bm25_prefixes",
    "late-interaction": "late_interaction",
    "bm25-formulas": "bm25_formulas",
}


def _module(name: str):
    return importlib.import_module(f"research.locomo.{EXPERIMENTS[name]}")


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "list"):
        for name in EXPERIMENTS:
            doc = (_module(name).__doc__ or "").strip().splitlines()[0]
            print(f"{name:18} {doc}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in EXPERIMENTS:
        print(f"unknown experiment {name!r}; `python -m research` lists them", file=sys.stderr)
        return 2
    sys.argv = [f"research {name}", *rest]
    _module(name).main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
