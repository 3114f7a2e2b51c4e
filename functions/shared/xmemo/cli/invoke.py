"""`xmemo invoke <function> --event <file>`: run one handler with an event file and a
Lambda context, as `sam local invoke -e` would, without Docker; prints the response."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path


def register(sub) -> None:
    parser = sub.add_parser("invoke", help="invoke a function of template.yaml with an event file")
    parser.add_argument("function", help="logical id (RememberFunction) or code folder (remember)")
    parser.add_argument("--event", "-e", type=Path, required=True, help="API Gateway proxy event JSON")
    parser.add_argument("--template", type=Path, default=None, help="SAM template (default: ./template.yaml or a parent's)")
    parser.set_defaults(func=run)


def run(args) -> int:
    from .serve import quiet_powertools

    quiet_powertools()
    from ..local.functions import FunctionPool
    from ..local.template import find_template, routes_of

    template = args.template or find_template()
    routes = [r for r in routes_of(template) if args.function in (r.function, r.code_uri.name)]
    if not routes:
        names = sorted({f"{r.function} ({r.code_uri.name})" for r in routes_of(template)})
        print(f"no function {args.function!r} in {template}; known: {', '.join(names)}")
        return 2
    event = json.loads(args.event.read_text())
    with contextlib.redirect_stdout(sys.stderr):  # handler logs/metrics to stderr, response alone on stdout
        response = FunctionPool(routes[0], size=1).invoke(event)
    print(json.dumps(response, indent=2, ensure_ascii=False))
    return 0
