"""`xmemo export` and `xmemo import`: JSON Lines backups of memories (no embeddings)."""

from __future__ import annotations

import argparse
import sys

from ..auth import principal_from_claims
from ..services import build_services
from ..transfer import export_memories, import_memories


def _export(args: argparse.Namespace) -> int:
    svc = build_services()
    scopes = ["memory:read"] + (["memory:temporary"] if args.include_temporary else [])
    rs = svc.settings.resource_server
    claims = {"sub": args.owner, "scope": " ".join(f"{rs}/{s}" for s in scopes), "custom:teams": ",".join(args.team)}
    principal = principal_from_claims(claims, rs)
    out = open(args.output, "w", encoding="utf-8") if args.output != "-" else sys.stdout
    try:
        n = export_memories(svc, principal, out)
    finally:
        if out is not sys.stdout:
            out.close()
    print(f"exported {n} memories", file=sys.stderr)
    return 0


def _import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    svc = build_services()
    src = open(args.input, encoding="utf-8") if args.input != "-" else sys.stdin
    total = None
    if args.input != "-":
        with open(args.input, encoding="utf-8") as f:
            total = sum(1 for line in f if line.strip())
    with tqdm(total=total, unit="mem", desc="import", file=sys.stderr, disable=args.quiet) as bar:
        report = import_memories(svc, src, batch=args.batch, progress=bar.update)
    print(
        f"stored {report.stored}, duplicates {report.duplicates}, redacted {report.redacted}, errors {len(report.errors)}",
        file=sys.stderr,
    )
    for line in report.errors[:20]:
        print(f"  {line}", file=sys.stderr)
    return 1 if report.errors else 0


def register(sub) -> None:
    p = sub.add_parser("export", help="write the memories an owner can see as JSON Lines")
    p.add_argument("--owner", required=True, help="owner (Cognito sub or client id) to export as")
    p.add_argument("--team", action="append", default=[], help="also export this team's memories (repeatable)")
    p.add_argument("--include-temporary", action="store_true", help="include live temporary memories")
    p.add_argument("--output", "-o", default="-", help="file to write (default: stdout)")
    p.set_defaults(func=_export)

    p = sub.add_parser("import", help="store memories from a JSON Lines export (idempotent)")
    p.add_argument("input", help="JSONL file, or - for stdin")
    p.add_argument("--batch", type=int, default=64, help="memories per atomic write")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_import)
