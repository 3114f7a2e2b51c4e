"""`xmemo user add|list|delete`: people who log in at the local gateway's login form."""

from __future__ import annotations

import getpass
import sys


def register(sub) -> None:
    parser = sub.add_parser("user", help="manage local users (the login form of `xmemo serve`)")
    inner = parser.add_subparsers(dest="user_command", required=True, metavar="ACTION")
    add = inner.add_parser("add", help="create or update a user; the password is read from standard input")
    add.add_argument("name")
    add.add_argument("--team", action="append", default=[], help="team slug the user's tokens carry (repeat)")
    add.set_defaults(func=run_add)
    inner.add_parser("list", help="list users (never passwords)").set_defaults(func=run_list)
    delete = inner.add_parser("delete", help="remove a user (their refresh tokens stop working)")
    delete.add_argument("name")
    delete.set_defaults(func=run_delete)


def _registry():
    from ..config import Settings
    from ..local.users import UserRegistry

    return UserRegistry(Settings().data_dir)


def read_password() -> str:
    """From the terminal without echo, or the first line of a pipe (never an argument,
    which other users could read in the process list)."""
    if sys.stdin.isatty():
        return getpass.getpass("Password: ")
    return sys.stdin.readline().rstrip("\r\n")


def run_add(args) -> int:
    import re

    from ..models import SLUG_PATTERN

    bad = [t for t in args.team if not re.match(SLUG_PATTERN, t)]
    if bad:
        print(f"error: {bad[0]!r} is not a team slug", file=sys.stderr)
        return 2
    try:
        user = _registry().add(args.name, read_password(), args.team)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"user {user.name} saved (teams: {', '.join(user.teams) or '-'})")
    return 0


def run_list(args) -> int:
    for user in _registry().all():
        print(f"{user.name}  teams={','.join(user.teams) or '-'}")
    return 0


def run_delete(args) -> int:
    if not _registry().delete(args.name):
        print(f"no user {args.name}")
        return 1
    return 0
