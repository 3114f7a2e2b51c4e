"""`xmemo` command line. Each sub-command lives in its own module of this package and
exposes `register(subparsers)`; modules are discovered, so adding a command touches no
other file."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from ..errors import XMemoError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xmemo", description="XMemo: hosted memory for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except XMemoError as exc:
        print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
