"""`xmemo token`: print an access token shaped like Cognito's, signed by the local key."""

from __future__ import annotations


def register(sub) -> None:
    parser = sub.add_parser("token", help="print a local access token (Cognito access-token shape)")
    parser.add_argument("--sub", required=True, help="the subject (owner of the memories it writes)")
    parser.add_argument(
        "--scope", action="append", required=True, help="memory:read, memory:write or memory:temporary (repeat)"
    )
    parser.add_argument("--team", action="append", default=[], help="team slug, carried as cognito:groups team:<slug> (repeat)")
    parser.add_argument("--ttl", type=int, default=3600, help="lifetime in seconds (default 3600)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..config import Settings
    from ..errors import InvalidRequest
    from ..local.keys import SigningKey
    from ..local.tokens import issue_token

    if args.ttl <= 0:
        raise InvalidRequest("--ttl must be positive")
    settings = Settings()
    print(issue_token(settings, SigningKey(settings.data_dir), scopes=args.scope, sub=args.sub, teams=args.team, ttl=args.ttl))
    return 0
