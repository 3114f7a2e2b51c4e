"""The HTTP edge of the REST handlers: the ONE place mapping domain errors to HTTP, plus
the plumbing every `functions/<name>/app.py` shares (claims → principal, the scope
re-check, JSON bodies and query strings, the services getter, observability).

A REST route is one call of `tool_route`: authorize → parse → one call into `xmemo.tools`
→ count → respond. The MCP function (`xmemo.mcp.edge`) sits on the same resolver, entry
point, services and metrics. Nothing here logs memory content, request bodies or tokens."""

from __future__ import annotations

import base64
import json
import os
import traceback
import types
import typing
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from pydantic import BaseModel

from .auth import Principal, principal_from_claims
from .config import Settings
from .errors import InvalidRequest, NotFound, StoreUnavailable, XMemoError
from .models import parse_input
from .results import Result
from .services import Services, default_services, default_settings
from . import startup, status as spec_status

INTERNAL_MESSAGE = "internal error; nothing about the request was leaked or half-written"

# Powertools reads POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE / log level from
# the environment (template Globals); these defaults only matter outside Lambda.
logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "xmemo"))
# X-Ray patches only `http.client`, which both outbound paths (OpenSearch through urllib3, Bedrock
# through botocore's urllib3) go through, so each call still gets its subsegment. Patching
# everything X-Ray knows would import botocore, requests and more at every cold start (about
# half of a handler's import time here) for subsegments that say nothing more.
TRACED_MODULES = ("httplib",)
tracer = Tracer(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "xmemo"), patch_modules=TRACED_MODULES)
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "XMemo"))


# ---------------------------------------------------------------------------------------
# errors → HTTP
def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """The SPEC §6 body: `{"error": {"code", "message", "details"?}}`."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


def status_of(exc: XMemoError) -> int:
    return spec_status.status_of(exc.code)


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Response:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps(body, ensure_ascii=False, separators=(",", ":")),
        headers={"Cache-Control": "no-store", **(headers or {})},
    )


def error_response(exc: XMemoError) -> Response:
    """A domain error as its SPEC §6 response (`Retry-After` on 503)."""
    status = status_of(exc)
    if status == 500:
        return internal_error_response(exc)
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, StoreUnavailable) else None
    add_count("ClientErrors" if status < 500 else "ServerErrors")
    return json_response(status, error_body(exc.code, exc.message, exc.details), headers)


def internal_error_response(exc: BaseException) -> Response:
    """500 with a generic message. The log names the exception type and where it was raised,
    never its message or arguments (which may quote memory content)."""
    logger.error(
        "unhandled error",
        extra={"error_type": type(exc).__name__, "frames": traceback.format_tb(exc.__traceback__)[-5:]},
    )
    add_count("ServerErrors")
    return json_response(500, error_body("internal", INTERNAL_MESSAGE))


def resolver() -> APIGatewayRestResolver:
    """A REST resolver whose every failure answers in the SPEC §6 shape."""
    app = APIGatewayRestResolver()
    app.exception_handler(XMemoError)(error_response)
    app.not_found(lambda _exc: json_response(404, error_body("not_found", "no such route")))
    app.exception_handler(Exception)(internal_error_response)
    return app


# ---------------------------------------------------------------------------------------
# services (cached per process; tests and the local gateway may hand in their own)
_services_override: Services | None = None


def services() -> Services:
    return _services_override or default_services()


def settings() -> Settings:
    """The settings in force, without building the store (a 401 or a 413 opens nothing)."""
    return _services_override.settings if _services_override is not None else default_settings()


@contextmanager
def using_services(svc: Services) -> Iterator[Services]:
    """Run handlers against `svc` (a test's SQLite file) instead of the process default."""
    global _services_override
    previous, _services_override = _services_override, svc
    try:
        yield svc
    finally:
        _services_override = previous


# ---------------------------------------------------------------------------------------
# identity and input
def claims_of(event: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """`requestContext.authorizer.claims` of a REST proxy event (what the Cognito authorizer,
    or the local gateway, verified). Raw-event form, so non-resolver handlers can use it."""
    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    return authorizer.get("claims")


def authorize(app: APIGatewayRestResolver, scope: str) -> Principal:
    """The caller from verified claims, with the route's scope checked again (the gateway
    checked it first): 401 without claims, 403 `insufficient_scope` without the scope."""
    principal = principal_from_claims(claims_of(app.current_event.raw_event), settings().resource_server)
    principal.require(scope)
    return principal


def body_too_large(size: int) -> InvalidRequest | None:
    """SPEC §6 has no 413: an oversized body is a malformed request (400 invalid_request)."""
    limit = settings().max_body_bytes
    if size <= limit:
        return None
    return InvalidRequest(f"the request body exceeds {limit} bytes", {"max_body_bytes": limit})


def check_body_size(raw: str | None, base64_encoded: bool = False) -> None:
    """Refuse an oversized body before anything parses it (cheap: lengths only)."""
    if not raw:
        return
    size = len(raw) * 3 // 4 if base64_encoded else (len(raw) if raw.isascii() else len(raw.encode("utf-8", "surrogatepass")))
    if (error := body_too_large(size)) is not None:
        raise error


def json_body(app: APIGatewayRestResolver) -> Any:
    """The request body as JSON; malformed or missing JSON is 400 `invalid_request`."""
    event = app.current_event
    raw = event.body
    check_body_size(raw, event.is_base64_encoded)
    if raw is None or not raw.strip():
        raise InvalidRequest("a JSON object body is required")
    if event.is_base64_encoded:
        try:
            raw = base64.b64decode(raw).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            raise InvalidRequest("the body is not valid base64 UTF-8") from None
    try:
        return json.loads(raw)
    except ValueError:
        raise InvalidRequest("malformed JSON body") from None
    except RecursionError:  # `[[[[…` thousands deep: hostile, not a server fault
        raise InvalidRequest("the JSON body is nested too deeply") from None


def query_input(app: APIGatewayRestResolver, model: type[BaseModel]) -> dict[str, Any]:
    """Query-string parameters as input of `model`, converted as its own annotations say:
    list fields repeat (`tags=a&tags=b`) or are comma-separated; integers and booleans are
    converted only when well-formed, so a bad value still reaches the model and fails
    validation there (400 or 422). Unknown names pass through for the model to refuse."""
    event = app.current_event
    multi = event.multi_value_query_string_parameters or {}
    single = event.query_string_parameters or {}
    kinds = _query_kinds(model)
    out: dict[str, Any] = {}
    for name in set(multi) | set(single):
        values = multi.get(name) or [single[name]]
        kind = kinds.get(name)
        if kind is list:
            out[name] = [v for value in values for v in value.split(",") if v]
            continue
        if len(values) > 1:
            raise InvalidRequest(f"invalid {name}: given more than once")
        value: Any = values[0]
        if kind is int and value.lstrip("-").isdigit():
            value = int(value)
        elif kind is bool and value in ("true", "false"):
            value = value == "true"
        out[name] = value
    return out


def _query_kinds(model: type[BaseModel]) -> dict[str, type]:
    """`list`, `int` or `bool` for each field of `model` whose annotation (optional or not)
    is one of those; other fields stay strings."""
    kinds: dict[str, type] = {}
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            options = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = options[0] if len(options) == 1 else annotation
        origin = typing.get_origin(annotation) or annotation
        for kind in (list, bool, int):  # bool before int: a bool is an int
            if isinstance(origin, type) and issubclass(origin, kind):
                kinds[name] = kind
                break
    return kinds


def path_param(app: APIGatewayRestResolver, name: str) -> str:
    value = (app.current_event.path_parameters or {}).get(name)
    if not value:
        raise NotFound()
    return value


# ---------------------------------------------------------------------------------------
# responses, the route helper and the Lambda entry point
def respond(result: Result, status: int = 200) -> Response:
    """A tool result as the REST body: its structured profile."""
    return json_response(status, result.structured())


def tool_route(
    app: APIGatewayRestResolver,
    tool: Callable[[Services, Principal, Any], Result],
    scope: str,
    model: type[BaseModel],
    read: Callable[[], Any],
    status: Callable[[Any], int] = lambda _result: 200,
) -> Response:
    """The whole of a REST route: authorize (before reading anything) → parse what `read`
    returns into `model` → call `tool` → count it under its name → respond."""
    principal = authorize(app, scope)
    inp = parse_input(model, read())
    result = tool(services(), principal, inp)
    count(tool.__name__)
    return respond(result, status(result))


def count(tool: str) -> None:
    """One `ToolCalls` metric per successful call, dimension `tool`."""
    add_count("ToolCalls", tool=tool)


def add_count(name: str, value: int = 1, **dimensions: str) -> None:
    """Add a count, unless metrics are disabled: Powertools then skips the flush but keeps
    what was added, and prints the whole pile as EMF on stdout once 100 values collect."""
    if is_metrics_disabled():
        return
    for dimension, label in dimensions.items():
        metrics.add_dimension(name=dimension, value=label)
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def lambda_handler(app: APIGatewayRestResolver, *, tools: Iterable[Callable[..., Any]] = (), models: Iterable[type[BaseModel]] = (),
                   packs: bool = False, embeds: bool = False) -> Callable[[dict, Any], dict]:
    """The Lambda entry point of a resolver: correlation id from the API Gateway request id,
    tracing without capturing responses (they hold memory content), metrics flushed.
    Inside Lambda the function initialises here (`xmemo.startup`: the models of the `tools`
    it calls and the other `models` it uses, the encoding when it `packs`, the local model
    when it `embeds`) and registers the SnapStart after-restore hook."""
    initialisation: dict[str, float] = {}
    if startup.in_lambda():
        initialisation = startup.initialise(services, models=startup.models_of(tools, models), packs=packs, embeds=embeds)
        startup.register_restore_hook()
        logger.info("initialised", extra={"initialisation": initialisation})

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, log_event=False, clear_state=True)
    @tracer.capture_lambda_handler(capture_response=False)
    @metrics.log_metrics(capture_cold_start_metric=not is_metrics_disabled())  # printed even when disabled
    def handler(event: dict, context: Any) -> dict:
        return app.resolve(event, context)

    handler.initialisation = initialisation  # type: ignore[attr-defined]  # read by `xmemo bench coldstart`
    return handler
