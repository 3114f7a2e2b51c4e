"""XMemo as a Pydantic AI toolset: the four tools of the public MCP profile (`remember`,
`recall`, `search_memory`, `recall_context`), so an agent built with Pydantic AI gets the
same tools, descriptions, parameter schemas and answers as one connected over MCP.

The descriptions and JSON schemas are the service's own input models' (`xmemo.models`),
arguments are validated by those models, and each answer is the SPEC §5 text that
`xmemo.render` makes from the result. Invalid arguments (400/422) go back to the model as a
retry prompt; other refusals (403, 404) are the tool's answer, `Error <status> <code>:
<message>` as over MCP; an unreachable or unauthorized service fails the run."""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable

from pydantic import BaseModel, ValidationError
from pydantic_ai import ModelRetry, Tool
from pydantic_ai.toolsets import FunctionToolset

from .. import render
from ..client import APIError, AsyncXMemo, InvalidRequestError, OutOfBoundsError, UnauthorizedError, XMemo
from ..mcp.errors import error_text
from ..models import ContextPublic, RecallPublic, RememberPublic, SearchPublic

# tool name → (its public input model, the client method that runs it)
TOOLS: dict[str, tuple[type[BaseModel], str]] = {
    "remember": (RememberPublic, "remember"),
    "recall": (RecallPublic, "recall"),
    "search_memory": (SearchPublic, "search"),
    "recall_context": (ContextPublic, "context"),
}


def _arguments(model: type[BaseModel], given: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(first positional argument, keyword arguments) of the client call, as validated by
    the service's own model; a ModelRetry naming the problem if they are invalid."""
    try:
        parsed = model.model_validate(given)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors(include_url=False))
        raise ModelRetry(f"invalid arguments: {problems}") from None
    args = parsed.model_dump(exclude_unset=True)
    first = args.pop("content", None) if "content" in model.model_fields else args.pop("query", None)
    return first, args


def _answer(result: Any) -> str:
    return render.text(result)


def _refused(exc: APIError) -> str:
    if isinstance(exc, (InvalidRequestError, OutOfBoundsError)):
        raise ModelRetry(error_text(exc)) from exc
    if isinstance(exc, UnauthorizedError):
        raise exc
    return error_text(exc)


def _sync_tool(client: XMemo, model: type[BaseModel], method: str) -> Callable[..., str]:
    call = getattr(client, method)

    def run(**given: Any) -> str:
        first, args = _arguments(model, given)
        try:
            return _answer(call(first, **args))
        except APIError as exc:
            if exc.status >= 500:
                raise
            return _refused(exc)

    return run


def _async_tool(client: AsyncXMemo, model: type[BaseModel], method: str) -> Callable[..., Awaitable[str]]:
    call = getattr(client, method)

    async def run(**given: Any) -> str:
        first, args = _arguments(model, given)
        try:
            return _answer(await call(first, **args))
        except APIError as exc:
            if exc.status >= 500:
                raise
            return _refused(exc)

    return run


def memory_toolset(client: XMemo | AsyncXMemo, *, tools: tuple[str, ...] = tuple(TOOLS), read_only: bool = False) -> FunctionToolset:
    """A toolset over `client` (sync tools for `XMemo`, async for `AsyncXMemo`); `read_only`
    leaves out `remember`, `tools` picks a subset by name."""
    chosen = [name for name in tools if not (read_only and name == "remember")]
    made = []
    for name in chosen:
        model, method = TOOLS[name]
        function = _async_tool(client, model, method) if isinstance(client, AsyncXMemo) else _sync_tool(client, model, method)
        schema = model.model_json_schema(mode="validation")
        schema.pop("description", None)  # the docstring is the tool's description already
        schema.pop("title", None)
        made.append(Tool.from_schema(function, name=name, description=inspect.getdoc(model), json_schema=schema))
    return FunctionToolset(made)
