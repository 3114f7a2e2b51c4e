"""The OpenAPI 3.1 document of the REST API, generated, never written by hand: routes,
methods and scopes come from `template.yaml` (what SAM deploys and the local gateway
serves; the caller reads it, so the layer needs no YAML), request schemas from the
pydantic models that validate input and response schemas from the tool results of
`xmemo.results`, so the document cannot drift from the code. Schemathesis fuzzes the
gateway from it.

The MCP routes are JSON-RPC, not REST; `tools/list` describes them instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal, Protocol

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from . import __version__
from .status import STATUS
from .models import ContextInput, ForgetInput, GetInput, ListInput, RecallInput, RememberInput, SearchInput
from .results import ContextResult, ForgetResult, ListResult, MemoryResult, RecallResult, RememberResult, SearchResult

REF = "#/components/schemas/{model}"
SECURITY_SCHEME = "cognito"


# ---------------------------------------------------------------------------------------
# the error body (the success bodies are the tool results of `xmemo.results`)
class ErrorDetail(BaseModel):
    code: Literal[tuple(sorted(STATUS))]  # type: ignore[valid-type]
    message: str
    details: Any = None


class ErrorBody(BaseModel):
    """SPEC §6: every 4xx/5xx body."""

    error: ErrorDetail


# ---------------------------------------------------------------------------------------
class Route(Protocol):
    """What this module reads of a template route (`xmemo.local.template.Route` is one)."""

    method: str
    resource: str
    scopes: tuple[str, ...]
    authorized: bool


@dataclass(frozen=True)
class Operation:
    """How a template route takes its input (what its handler parses) and what it answers."""

    operation_id: str
    tool: str
    model: type[BaseModel]
    source: Literal["body", "query", "path"]
    output: type[BaseModel]
    success: tuple[int, ...] = (200,)
    errors: tuple[int, ...] = (400, 401, 403, 422, 503)
    exclude: tuple[str, ...] = ()  # model fields this route does not take


OPERATIONS: dict[tuple[str, str], Operation] = {
    ("POST", "/v1/memories"): Operation("remember", "remember", RememberInput, "body", RememberResult, (201, 200), (400, 401, 403, 404, 422, 503)),
    ("POST", "/v1/recall"): Operation("recall", "recall", RecallInput, "body", RecallResult),
    ("POST", "/v1/search"): Operation("search_memory", "search_memory", SearchInput, "body", SearchResult),
    ("POST", "/v1/context"): Operation("recall_context", "recall_context", ContextInput, "body", ContextResult),
    ("GET", "/v1/memories"): Operation("list_memories", "list_memories", ListInput, "query", ListResult),
    # 422: a reference longer than its bound (the path parameter's maxLength) is out_of_bounds, as any bound is
    ("GET", "/v1/memories/{reference}"): Operation("get_memory", "get_memory", GetInput, "path", MemoryResult, errors=(400, 401, 403, 404, 422, 503)),
    ("DELETE", "/v1/memories/{reference}"): Operation("forget_reference", "forget", GetInput, "path", ForgetResult, errors=(400, 401, 403, 404, 422, 503)),
    ("POST", "/v1/forget"): Operation("forget_by_filter", "forget", ForgetInput, "body", ForgetResult, exclude=("reference",)),
}

_REASONS = {200: "OK", 201: "Created", 400: "invalid_request", 401: "unauthorized", 403: "insufficient_scope or team_mismatch",
            404: "not_found", 422: "out_of_bounds or capture_policy", 503: "store_unavailable (Retry-After set)"}


def _schemas() -> dict[str, Any]:
    models = {op.model for op in OPERATIONS.values()} | {op.output for op in OPERATIONS.values()} | {ErrorBody}
    _, top = models_json_schema(
        [(m, "validation" if m in {op.model for op in OPERATIONS.values()} else "serialization") for m in sorted(models, key=lambda m: m.__name__)],
        ref_template=REF,
    )
    schemas = top.get("$defs", {})
    filtered = {}
    for op in OPERATIONS.values():
        if op.exclude and op.source == "body":
            schema = dict(schemas[op.model.__name__])
            schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in op.exclude}
            filtered[f"{op.model.__name__}_{op.operation_id}"] = schema
    return {**schemas, **filtered}


def _body_ref(op: Operation) -> str:
    name = f"{op.model.__name__}_{op.operation_id}" if op.exclude else op.model.__name__
    return REF.format(model=name)


def _parameters(op: Operation, schemas: dict[str, Any]) -> list[dict[str, Any]]:
    schema = schemas[op.model.__name__]
    required = set(schema.get("required", []))
    where = "path" if op.source == "path" else "query"
    params = []
    for name, prop in schema["properties"].items():
        prop = _not_null(prop)
        param: dict[str, Any] = {"name": name, "in": where, "required": where == "path" or name in required, "schema": prop}
        if prop.get("description"):
            param["description"] = prop["description"]
        if prop.get("type") == "array":
            param.update(style="form", explode=True)
        params.append(param)
    return params


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query or path parameter is absent or a value, never JSON null: drop the null branch."""
    branches = [b for b in schema.get("anyOf", []) if b.get("type") != "null"]
    if len(branches) != 1:
        return schema
    rest = {k: v for k, v in schema.items() if k not in ("anyOf", "default")}
    return {**rest, **branches[0]}


def _doc(model: type[BaseModel]) -> str:
    """The first docstring up the model's bases: the tool's manual."""
    return next(((c.__doc__ or "").strip() for c in model.__mro__ if (c.__doc__ or "").strip()), "")


def _operation(route: Route, op: Operation, schemas: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "operationId": op.operation_id,
        "summary": f"{op.tool} ({' or '.join(route.scopes) or 'no scope'})",
        "description": _doc(op.model),
        "tags": [op.tool],
        "security": [{SECURITY_SCHEME: list(route.scopes)}] if route.authorized else [],
        "responses": {},
    }
    if op.source == "body":
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": {"$ref": _body_ref(op)}}}}
    else:
        out["parameters"] = _parameters(op, schemas)
    for status in op.success:
        out["responses"][str(status)] = {"description": _REASONS[status], "content": {"application/json": {"schema": {"$ref": REF.format(model=op.output.__name__)}}}}
    for status in op.errors:
        response: dict[str, Any] = {"description": _REASONS[status], "content": {"application/json": {"schema": {"$ref": REF.format(model="ErrorBody")}}}}
        if status == 503:
            response["headers"] = {"Retry-After": {"required": True, "schema": {"type": "integer", "minimum": 0}}}
        out["responses"][str(status)] = response
    return out


def build_openapi(routes: Iterable[Route], server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every REST route in `routes` (the template's, scopes
    resolved; routes without an entry in `OPERATIONS`, i.e. MCP, are left out; a REST route
    missing from it is an error)."""
    schemas = _schemas()
    paths: dict[str, dict[str, Any]] = {}
    scopes: set[str] = set()
    for route in routes:
        op = OPERATIONS.get((route.method, route.resource))
        if op is None:
            if route.resource.startswith("/v1/"):
                raise LookupError(f"{route.method} {route.resource} has no OpenAPI operation")
            continue
        scopes.update(route.scopes)
        paths.setdefault(route.resource, {})[route.method.lower()] = _operation(route, op, schemas)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "XMemo REST API",
            "version": __version__,
            "description": "Hosted memory for AI agents. Generated from template.yaml and the xmemo pydantic models.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                SECURITY_SCHEME: {
                    "type": "oauth2",
                    "description": "Cognito access token (Authorization: Bearer <jwt>); scopes are checked by the gateway and again by the handler.",
                    "flows": {"clientCredentials": {"tokenUrl": "/oauth2/token", "scopes": {s: s for s in sorted(scopes)}}},
                }
            },
        },
    }
    if server_url:
        doc["servers"] = [{"url": server_url}]
    return doc
