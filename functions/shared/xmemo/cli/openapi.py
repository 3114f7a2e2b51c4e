"""`xmemo openapi`: print the REST API's OpenAPI 3.1 document (generated from
template.yaml and the pydantic models; the local gateway serves the same at /openapi.json)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def register(sub) -> None:
    parser = sub.add_parser("openapi", help="print the OpenAPI 3.1 document of the REST API")
    parser.add_argument("--template", type=Path, default=None, help="SAM template (default: ./template.yaml or a parent's)")
    parser.add_argument("--server", default=None, help="base URL to list under `servers`")
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..config import Settings
    from ..local.template import find_template, routes_of
    from ..openapi import build_openapi

    routes = routes_of(args.template or find_template(), {"ResourceServerId": Settings().resource_server})
    doc = build_openapi(routes, args.server)
    json.dump(doc, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0
