"""Handler tests: the events/*.json files, run through the real handlers (as `sam local
invoke -e` would) against a fresh SQLite store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmemo import api
from xmemo.local.functions import FunctionPool
from xmemo.local.template import routes_of

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"


def route_for(event: dict):
    """The template route that API Gateway would send `event` to."""
    for route in routes_of(TEMPLATE):
        if route.method == event["httpMethod"] and route.resource == event["resource"]:
            return route
    raise LookupError(f"no route {event['httpMethod']} {event['resource']} in template.yaml")


def headers_of(response: dict) -> dict:
    multi = {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}
    return {**(response.get("headers") or {}), **multi}


@pytest.fixture
def invoke(services):
    """invoke(event) → (status, body dict, headers), through the real handler module."""
    pools: dict[str, FunctionPool] = {}

    def run(event: dict):
        route = route_for(event)
        pool = pools.setdefault(route.function, FunctionPool(route, size=1))
        with api.using_services(services):
            response = pool.invoke(event)
        return response["statusCode"], json.loads(response["body"]), headers_of(response)

    return run


@pytest.fixture
def invoke_with():
    """invoke_with(services, event) → (status, body, headers) with explicit services."""
    pools: dict[str, FunctionPool] = {}

    def run(svc, event: dict):
        route = route_for(event)
        pool = pools.setdefault(route.function, FunctionPool(route, size=1))
        with api.using_services(svc):
            response = pool.invoke(event)
        return response["statusCode"], json.loads(response["body"]), headers_of(response)

    return run
