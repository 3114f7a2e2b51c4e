"""OpenSearch's official API specification (OpenAPI 3.1, `../shared/opensearch-api-spec`)
as JSON Schema validators, for the request bodies no local server can execute.

Two readings make it a useful check rather than a formality:
- objects are closed where they are used (`unevaluatedProperties: false` at each `$ref`
  and inline object, never on a definition or on one piece of an `allOf`), so a
  misspelt key (`filtr`, `engin`) is an error; the specification itself leaves them open;
- `oneOf` is read as `anyOf`: its alternatives overlap in places (a sort `{field: order}`
  matches two of them), and OpenSearch accepts either form.
Paths are matched to operations as the specification lists them, so a recorded request
(method, path, body) finds its schema without a table of our own."""

from __future__ import annotations

import copy
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

COMPOSITIONS = ("allOf", "anyOf", "oneOf")
OPEN_KEYS = ("additionalProperties", "unevaluatedProperties", "patternProperties", "propertyNames")
NDJSON = "application/x-ndjson"


def spec_dir() -> Path | None:
    """`XMEMO_OPENSEARCH_SPEC`, else `shared/opensearch-api-spec` beside the repository
    (or beside a folder above it)."""
    env = os.environ.get("XMEMO_OPENSEARCH_SPEC")
    here = Path(__file__).resolve()
    candidates = [Path(env)] if env else [p / "shared" / "opensearch-api-spec" for p in here.parents[2:]]
    for c in candidates:
        if (c / "spec" / "namespaces" / "_core.yaml").is_file():
            return c / "spec"
    return None


def _root() -> Path:
    root = spec_dir()
    if root is None:
        raise FileNotFoundError("OpenSearch API specification not found (set XMEMO_OPENSEARCH_SPEC)")
    return root


@lru_cache(maxsize=None)
def _raw(path: str) -> Any:
    return yaml.safe_load(Path(path).read_text())


def _target(path: str, ref: str) -> Any:
    file, _, pointer = ref.partition("#")
    node: Any = _raw(str((Path(path).parent / file).resolve()) if file else path)
    for part in [p for p in pointer.split("/") if p]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _closable(schema: Any, path: str, depth: int = 0) -> bool:
    """An object schema that names its properties and does not declare itself open
    (through a chain of bare `$ref`s, as `CreateOperation` → `WriteOperation`)."""
    if isinstance(schema, dict) and set(schema) - {"description", "title"} == {"$ref"} and depth < 8:
        ref = schema["$ref"]
        file = ref.partition("#")[0]
        return _closable(_target(path, ref), str((Path(path).parent / file).resolve()) if file else path, depth + 1)
    return (
        isinstance(schema, dict)
        and any(k in schema for k in ("properties", *COMPOSITIONS))
        and not any(k in schema for k in OPEN_KEYS)
        and schema.get("type", "object") == "object"
    )


def _strict(node: Any, path: str, close: bool = True) -> Any:
    if isinstance(node, list):
        return [_strict(n, path) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in COMPOSITIONS and isinstance(value, list):
            out["anyOf" if key == "oneOf" else key] = [_strict(v, path, close=False) for v in value]
        elif key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
            out[key] = {k: _strict(v, path) for k, v in value.items()}
        elif key == "components" and isinstance(value, dict):
            out[key] = {
                kind: {n: _strict(d, path, close=kind != "schemas") for n, d in defs.items()} if isinstance(defs, dict) else defs
                for kind, defs in value.items()
            }
        else:
            out[key] = _strict(value, path)
    if close and not any(k in node for k in OPEN_KEYS):
        if "$ref" in node:
            if _closable({"$ref": node["$ref"]}, path):
                out["unevaluatedProperties"] = False
        elif _closable(node, path):
            out["unevaluatedProperties"] = False
    return out


@lru_cache(maxsize=None)
def _strict_doc(path: str) -> Any:
    return _strict(copy.deepcopy(_raw(path)), path)


def _retrieve(uri: str) -> Resource:
    return Resource.from_contents(_strict_doc(uri.removeprefix("file://")), default_specification=DRAFT202012)


def _validator(schema: dict[str, Any], base: Path) -> Draft202012Validator:
    return Draft202012Validator({"$id": base.as_uri(), **schema}, registry=Registry(retrieve=_retrieve))


@lru_cache(maxsize=None)
def schema_validator(schema_file: str, name: str) -> Draft202012Validator:
    """One named schema of `schemas/<schema_file>.yaml`, closed where it is used."""
    uri = (_root() / "schemas" / f"{schema_file}.yaml").as_uri()
    return Draft202012Validator(
        {"$ref": f"{uri}#/components/schemas/{name}", "unevaluatedProperties": False}, registry=Registry(retrieve=_retrieve)
    )


@lru_cache(maxsize=1)
def _operations() -> list[tuple[str, re.Pattern[str], str, dict[str, Any]]]:
    """(method, path pattern, namespace file, operation) for every operation with a body."""
    ops = []
    for file in sorted((_root() / "namespaces").glob("*.yaml")):
        for template, methods in (_raw(str(file)).get("paths") or {}).items():
            pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")
            for method, op in methods.items():
                if isinstance(op, dict) and "requestBody" in op:
                    ops.append((method.upper(), pattern, str(file), op))
    # literal segments beat placeholders: `/_search` must not match `/{index}`
    return sorted(ops, key=lambda o: -o[1].pattern.count("_"))


@lru_cache(maxsize=None)
def _body_validator(file: str, ref: str, content_type: str) -> Draft202012Validator:
    schema = _strict_doc(file)
    for part in [p for p in ref.split("#", 1)[1].split("/") if p]:
        schema = schema[part]
    return _validator(schema["content"][content_type]["schema"], Path(file))


def operation_of(method: str, path: str) -> str:
    """The operationId the specification lists for this request."""
    for m, pattern, _, op in _operations():
        if m == method.upper() and pattern.match(path):
            return op["operationId"]
    raise LookupError(f"no operation with a body for {method} {path} in the specification")


def errors(method: str, path: str, body: Any) -> list[str]:
    """Why the specification rejects this request body (empty: it accepts it). NDJSON
    bodies are lists; `_bulk` action lines are checked against `OperationContainer`
    (the specification lets any object through there, since documents are free-form)."""
    for m, pattern, file, op in _operations():
        if m != method.upper() or not pattern.match(path):
            continue
        ref = op["requestBody"]["$ref"]
        content = _target(file, ref)["content"]
        content_type = NDJSON if NDJSON in content else "application/json"
        found = _messages(_body_validator(file, ref, content_type), body)
        if path.rstrip("/").endswith("/_bulk"):
            found += bulk_action_errors(body)
        return found
    raise LookupError(f"no operation with a body for {method} {path} in the specification")


def bulk_action_errors(lines: list[Any]) -> list[str]:
    validator = schema_validator("_core.bulk", "OperationContainer")
    out, i = [], 0
    while i < len(lines):
        action = lines[i]
        out += _messages(validator, action)
        i += 1 if "delete" in action else 2
    return out


def _messages(validator: Draft202012Validator, body: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path)) or '<body>'}: {e.message[:300]}" for e in validator.iter_errors(body)]


def parse_body(body: Any) -> Any:
    """A body as opensearch-py hands it to the transport: dict, JSON text or NDJSON text."""
    if body is None or isinstance(body, (dict, list)):
        return body
    text = body.decode() if isinstance(body, (bytes, bytearray)) else str(body)
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > 1 or text.endswith("\n"):
        return [json.loads(line) for line in lines]
    return json.loads(text)
