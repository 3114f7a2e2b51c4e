"""`xmemo client create|list|delete`: app clients for the local client-credentials grant."""

from __future__ import annotations

import json


def register(sub) -> None:
    parser = sub.add_parser("client", help="manage local OAuth app clients (POST /oauth2/token)")
    inner = parser.add_subparsers(dest="client_command", required=True, metavar="ACTION")
    create = inner.add_parser("create", help="register a client; prints its id and secret once")
    create.add_argument("--name", required=True)
    create.add_argument("--scope", action="append", required=True, help="scope it may be granted (repeat)")
    create.add_argument("--team", action="append", default=[], help="team slug its tokens carry (repeat)")
    create.set_defaults(func=run_create)
    inner.add_parser("list", help="list clients (never secrets)").set_defaults(func=run_list)
    delete = inner.add_parser("delete", help="remove a client")
    delete.add_argument("client_id")
    delete.set_defaults(func=run_delete)


def _registry():
    from ..config import Settings
    from ..local.clients import ClientRegistry

    settings = Settings()
    return settings, ClientRegistry(settings.data_dir)


def run_create(args) -> int:
    from ..local.tokens import full_scopes

    settings, registry = _registry()
    client, secret = registry.create(args.name, full_scopes(args.scope, settings.resource_server), args.team)
    print(json.dumps({"client_id": client.client_id, "client_secret": secret, "scopes": client.scopes, "teams": client.teams}, indent=2))
    return 0


def run_list(args) -> int:
    _, registry = _registry()
    for c in registry.all():
        print(f"{c.client_id}  {c.name}  scopes={' '.join(c.scopes)}  teams={','.join(c.teams) or '-'}")
    return 0


def run_delete(args) -> int:
    _, registry = _registry()
    if not registry.delete(args.client_id):
        print(f"no client {args.client_id}")
        return 1
    return 0
