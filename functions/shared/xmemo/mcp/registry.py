"""The tools each surface offers, with their MCP definitions generated from the input
models: the model's docstring is the description, its JSON Schema (2020-12) the
`inputSchema`, so what `tools/list` advertises is what `parse_input` enforces."""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from pydantic import BaseModel

from .. import results, tools
from ..auth import READ, WRITE, Principal
from ..models import (
    ContextInput,
    ContextPublic,
    ForgetInput,
    GetInput,
    ListInput,
    RecallInput,
    RecallPublic,
    RememberInput,
    RememberPublic,
    SearchInput,
    SearchPublic,
    parse_input,
)

PUBLIC, FULL = "public", "full"
_STRUCTURED_NOTE = (
    "\n\nOn this surface the result also carries `structuredContent` (see the output schema) "
    "next to the same text."
)


@dataclass(frozen=True)
class Tool:
    name: str
    title: str
    model: type[BaseModel]
    run: Callable[..., results.Result]  # (services, principal, input) -> a tool result
    scope: str
    output: type[BaseModel]  # the result model: `outputSchema`
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    full_model: type[BaseModel] | None = None  # what `run` takes, when `model` is a public subset

    def parse(self, arguments: dict[str, Any]) -> Any:
        """Validate against the advertised schema, then widen a public input to the full
        input the tool function takes (the extra fields keep their defaults)."""
        inp = parse_input(self.model, arguments)
        if self.full_model is not None:
            inp = self.full_model.model_validate(inp.model_dump())
        return inp

    def allowed(self, principal: Principal) -> bool:
        return principal.has(self.scope)

    def definition(self, surface: str, structured: bool) -> dict[str, Any]:
        """The `Tool` object of `tools/list` (`structured`: the revision knows `outputSchema`)."""
        description = inspect.getdoc(self.model) or ""
        out: dict[str, Any] = {"name": self.name, "title": self.title}
        if surface == FULL and structured:
            description += _STRUCTURED_NOTE
        out["description"] = description
        out["inputSchema"] = input_schema(self.model)
        if surface == FULL and structured:
            out["outputSchema"] = _schema(self.output)
        out["annotations"] = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": False,
        }
        return out


def _schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(mode="serialization")
    schema.pop("title", None)
    schema.pop("description", None)  # the docstring is the tool description already
    return schema


@lru_cache(maxsize=None)
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(mode="validation")
    schema.pop("title", None)
    schema.pop("description", None)
    props: dict[str, Any] = schema.get("properties", {})
    for prop in props.values():
        prop.pop("title", None)  # "Bucket" next to `bucket` only costs the model tokens
    required = schema.get("required", [])
    # Required parameters first, so the manual reads in the order a caller fills it in.
    schema["properties"] = {k: props[k] for k in sorted(props, key=lambda k: k not in required)}
    return schema


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return copy.deepcopy(_input_schema(model))


def _catalogue(surface: str) -> dict[str, Tool]:
    full = surface == FULL

    def pick(public: type[BaseModel], complete: type[BaseModel]) -> dict[str, Any]:
        return {"model": complete} if full else {"model": public, "full_model": complete}

    entries = [
        Tool("recall_context", "Recall a budgeted context pack", run=tools.recall_context, scope=READ,
             output=results.ContextResult, read_only=True, **pick(ContextPublic, ContextInput)),
        Tool("recall", "Recall relevant memories", run=tools.recall, scope=READ,
             output=results.RecallResult, read_only=True, **pick(RecallPublic, RecallInput)),
        Tool("search_memory", "Search memories strictly", run=tools.search_memory, scope=READ,
             output=results.SearchResult, read_only=True, **pick(SearchPublic, SearchInput)),
        Tool("remember", "Remember a durable memory", run=tools.remember, scope=WRITE,
             output=results.RememberResult, read_only=False, **pick(RememberPublic, RememberInput)),
    ]
    if full:
        entries += [
            Tool("get_memory", "Get one memory", model=GetInput, run=tools.get_memory, scope=READ,
                 output=results.MemoryResult, read_only=True),
            Tool("list_memories", "List memories", model=ListInput, run=tools.list_memories, scope=READ,
                 output=results.ListResult, read_only=True),
            Tool("forget", "Forget memories", model=ForgetInput, run=tools.forget, scope=WRITE,
                 output=results.ForgetResult, read_only=False, destructive=True),
        ]
    return {t.name: t for t in entries}


@lru_cache(maxsize=2)
def catalogue(surface: str) -> dict[str, Tool]:
    """Every tool of `surface` (`public` = SPEC §3's MCP profile, `full` = everything), in a
    fixed order so clients can cache the list."""
    if surface not in (PUBLIC, FULL):
        raise ValueError(f"unknown surface {surface!r}")
    return _catalogue(surface)


def models() -> list[type[BaseModel]]:
    """Every model the MCP surfaces validate or dump (built while the MCP function initialises)."""
    tools = [t for surface in (PUBLIC, FULL) for t in catalogue(surface).values()]
    return [m for t in tools for m in (t.model, t.full_model, t.output) if m is not None]


def listed(surface: str, principal: Principal, structured: bool) -> list[dict[str, Any]]:
    """`tools/list`: only the tools the caller's scopes allow."""
    return [t.definition(surface, structured) for t in catalogue(surface).values() if t.allowed(principal)]
