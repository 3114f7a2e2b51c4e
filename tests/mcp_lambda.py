"""The MCP Lambda function in-process, loaded from functions/mcp/app.py exactly as the
local gateway loads it, run against the services a test hands in (as the REST handler
tests do): API Gateway proxy events in, proxy responses out."""

from __future__ import annotations

from pathlib import Path

from xmemo import api
from xmemo.local.functions import FunctionPool
from xmemo.local.template import routes_of
from xmemo.services import Services

ROOT = Path(__file__).resolve().parents[1]


def mcp_pool() -> FunctionPool:
    route = next(r for r in routes_of(ROOT / "template.yaml") if r.function == "McpFunction")
    return FunctionPool(route, size=1)


def invoke_mcp(pool: FunctionPool, services: Services, event: dict) -> dict:
    """One invocation; `headers` merges the single- and multi-value headers the resolver sets."""
    with api.using_services(services):
        response = pool.invoke(event)
    multi = {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}
    return {**response, "headers": {**(response.get("headers") or {}), **multi}}
