"""`xmemo bench <name>`: benchmark commands. Each lives in `xmemo.bench.<name>` and exposes
`register(subparsers)`; they print their figures and save them under `--out`."""

from __future__ import annotations

import importlib
import pkgutil

from .. import bench as bench_pkg


def register(sub) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and save its report")
    inner = parser.add_subparsers(dest="bench", required=True, metavar="BENCHMARK")
    for info in sorted(pkgutil.iter_modules(bench_pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        importlib.import_module(f"{bench_pkg.__name__}.{info.name}").register(inner)
