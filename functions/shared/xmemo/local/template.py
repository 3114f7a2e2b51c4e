"""Routes, methods, handlers and required scopes read from `template.yaml` itself, so the
local gateway serves exactly what SAM deploys.

The YAML loader tolerates CloudFormation short-form intrinsics (`!Ref`, `!Sub`, …) and
resolves the two that route definitions use (`Ref` and `Fn::Sub` on parameters)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import yaml


class _CfnLoader(yaml.SafeLoader):
    """SafeLoader plus `!Tag value` → `{"Fn::Tag": value}` (`!Ref x` → `{"Ref": x}`)."""


def _intrinsic(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if tag_suffix == "Ref":
        return {"Ref": value}
    if tag_suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{tag_suffix}": value}


_CfnLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return yaml.load(fh, Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass


def resolve(value: Any, params: Mapping[str, str]) -> Any:
    """Resolve `Ref` and `Fn::Sub` over template parameters; anything else is returned as is."""
    if isinstance(value, dict) and len(value) == 1:
        (key, arg), = value.items()
        if key == "Ref" and arg in params:
            return params[arg]
        if key == "Fn::Sub":
            text, extra = (arg[0], arg[1]) if isinstance(arg, list) else (arg, {})
            names = {**params, **{k: resolve(v, params) for k, v in extra.items()}}
            return re.sub(r"\$\{([^}!]+)\}", lambda m: str(names.get(m.group(1), m.group(0))), text)
    if isinstance(value, list):
        return [resolve(v, params) for v in value]
    return value


@dataclass(frozen=True)
class Route:
    method: str
    resource: str  # the template path, e.g. /v1/memories/{reference}
    function: str  # logical id, e.g. MemoriesFunction
    code_uri: Path
    handler: str  # module.attribute, e.g. app.lambda_handler
    scopes: tuple[str, ...]  # any one of them passes (API Gateway semantics)
    authorized: bool
    timeout: int
    memory: int

    @property
    def pattern(self) -> re.Pattern[str]:
        parts = re.split(r"(\{[^}]+\})", self.resource)
        rx = "".join(
            (f"(?P<{p[1:-2]}>.+)" if p.endswith("+}") else f"(?P<{p[1:-1]}>[^/]+)") if p.startswith("{") else re.escape(p)
            for p in parts
        )
        return re.compile(f"^{rx}$")

    @property
    def handler_file(self) -> Path:
        module = self.handler.rsplit(".", 1)[0]
        return self.code_uri / (module.replace(".", "/") + ".py")


def parameter_values(template: Mapping[str, Any], overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    params = {name: str(p.get("Default", "")) for name, p in (template.get("Parameters") or {}).items()}
    params.update(overrides or {})
    params.setdefault("AWS::Region", "local")
    return params


def routes_of(template_path: Path, overrides: Mapping[str, str] | None = None) -> list[Route]:
    """Every `Api` event of every `AWS::Serverless::Function`, with its resolved scopes."""
    template = load_template(template_path)
    params = parameter_values(template, overrides)
    base = template_path.parent
    globals_fn = (template.get("Globals") or {}).get("Function") or {}
    resources = template.get("Resources") or {}
    default_authorizer = {
        name: ((r.get("Properties") or {}).get("Auth") or {}).get("DefaultAuthorizer")
        for name, r in resources.items()
        if r.get("Type") == "AWS::Serverless::Api"
    }
    routes: list[Route] = []
    for name, res in resources.items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        props = {**globals_fn, **(res.get("Properties") or {})}
        for event in (props.get("Events") or {}).values():
            if event.get("Type") != "Api":
                continue
            ep = event.get("Properties") or {}
            auth = ep.get("Auth") or {}
            api_id = (ep.get("RestApiId") or {}).get("Ref") if isinstance(ep.get("RestApiId"), dict) else None
            authorizer = auth.get("Authorizer") or default_authorizer.get(api_id)
            routes.append(
                Route(
                    method=str(ep["Method"]).upper(),
                    resource=str(ep["Path"]),
                    function=name,
                    code_uri=(base / str(props.get("CodeUri", "."))).resolve(),
                    handler=str(props.get("Handler", "app.lambda_handler")),
                    scopes=tuple(resolve(auth.get("AuthorizationScopes") or [], params)),
                    authorized=bool(authorizer) and authorizer != "NONE",
                    timeout=int(props.get("Timeout", 3)),
                    memory=int(props.get("MemorySize", 128)),
                )
            )
    return routes


def find_template(start: Path | None = None) -> Path:
    """`template.yaml` in `start` (default: the working directory) or its nearest parent."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "template.yaml"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no template.yaml in {here} or its parents (use --template)")
