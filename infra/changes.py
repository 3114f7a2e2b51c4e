"""What a change of one stack parameter does to a deployed stack, worked out offline over the
CloudFormation that SAM generates (`template_rules.translate`).

A parameter's new value reaches every property that references it: directly (`Ref`, `${P}` in
`Fn::Sub`), through a condition that reads it (`Fn::If`), or through a resource it makes
CloudFormation replace (whose `Ref` and attributes then change) or whose mirrored attribute it
changes (an SSM parameter's `Value`). A resource is replaced when a changed property is one of its
type's `createOnlyProperties`, read from the resource provider schemas cfn-lint ships, plus the
few replacements CloudFormation documents outside those schemas (REPLACED_UNLESS). Resources whose
`Condition` reads the parameter may be created or deleted instead (`toggled`).

Over-approximate on purpose: a property counts as changed when any part of it depends on the
parameter, whichever branch of an `Fn::If` the stack actually takes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterator, Mapping

SCHEMA_REGION = "us-east-1"

# Replacements CloudFormation documents outside createOnlyProperties: (type, property) -> the
# UpdatePolicy attribute that turns the replacement into an in-place update.
REPLACED_UNLESS: dict[tuple[str, str], str] = {
    # "When EnableVersionUpgrade is set to false, or is not specified, updating EngineVersion
    # results in replacement" (the AWS::OpenSearchService::Domain reference, EngineVersion).
    ("AWS::OpenSearchService::Domain", "EngineVersion"): "EnableVersionUpgrade",
    ("AWS::Elasticsearch::Domain", "ElasticsearchVersion"): "EnableVersionUpgrade",
}


@lru_cache(maxsize=None)
def create_only(resource_type: str) -> frozenset[str]:
    """Top-level properties of `resource_type` whose change replaces the resource (cfn-lint's
    copy of the resource provider schema); none for custom resources."""
    if resource_type.startswith("Custom::") or resource_type == "AWS::CloudFormation::CustomResource":
        return frozenset()
    from cfnlint.schema.manager import PROVIDER_SCHEMA_MANAGER

    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema(SCHEMA_REGION, resource_type).schema
    return frozenset(path.split("/")[2] for path in schema.get("createOnlyProperties") or [])


def condition_parameters(template: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Condition -> every name it reads, through the conditions it names."""
    conditions = template.get("Conditions") or {}
    memo: dict[str, frozenset[str]] = {}

    def of(name: str) -> frozenset[str]:
        if name not in memo:
            memo[name] = frozenset()  # a cycle is a template error; stop here
            found: set[str] = set()
            stack = [conditions.get(name)]
            while stack:
                value = stack.pop()
                if isinstance(value, dict):
                    for key, inner in value.items():
                        if key == "Condition" and isinstance(inner, str):
                            found |= of(inner)
                        elif key == "Ref" and isinstance(inner, str):
                            found.add(inner)
                        else:
                            stack.append(inner)
                elif isinstance(value, list):
                    stack.extend(value)
            memo[name] = frozenset(found)
        return memo[name]

    return {name: of(name) for name in conditions}


def inputs(value: Any, conditions: Mapping[str, frozenset[str]]) -> Iterator[str]:
    """The names `value` reads: parameters and resources (`R`), attributes (`R.Attr`), and
    everything the conditions of its `Fn::If`s read."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                yield inner
            elif key == "Fn::GetAtt":
                parts = inner if isinstance(inner, list) else str(inner).split(".", 1)
                yield f"{parts[0]}.{parts[1]}" if len(parts) > 1 and isinstance(parts[1], str) else str(parts[0])
                yield from inputs(parts[1:], conditions)
            elif key == "Fn::Sub":
                text = inner[0] if isinstance(inner, list) else inner
                yield from re.findall(r"\$\{([^}!][^}]*)\}", str(text))
                if isinstance(inner, list):
                    yield from inputs(inner[1:], conditions)
            elif key == "Fn::If" and isinstance(inner, list) and inner:
                yield from conditions.get(inner[0], ())
                yield from inputs(inner[1:], conditions)
            else:
                yield from inputs(inner, conditions)
    elif isinstance(value, list):
        for inner in value:
            yield from inputs(inner, conditions)


@dataclass
class Change:
    """The effect of changing `parameter` on a stack of the translated template."""
    parameter: str
    changed: dict[str, set[str]] = field(default_factory=dict)  # resource -> properties that change
    replaced: set[str] = field(default_factory=set)
    toggled: set[str] = field(default_factory=set)  # created or deleted (their Condition reads it)


def change_of(cfn: Mapping[str, Any], parameter: str) -> Change:
    """Propagate a new value of `parameter` through `cfn` until nothing more changes."""
    resources = cfn.get("Resources") or {}
    conditions = condition_parameters(cfn)
    change = Change(parameter)
    for name, resource in resources.items():
        if parameter in conditions.get(resource.get("Condition") or "", ()):
            change.toggled.add(name)

    def moved(name: str) -> bool:
        if name == parameter:
            return True
        target, _, attribute = name.partition(".")
        return target in change.replaced or (bool(attribute) and attribute in change.changed.get(target, ()))

    grew = True
    while grew:
        grew = False
        for name, resource in resources.items():
            for key, value in (resource.get("Properties") or {}).items():
                if key not in change.changed.get(name, ()) and any(moved(n) for n in inputs(value, conditions)):
                    change.changed.setdefault(name, set()).add(key)
                    grew = True
            if name not in change.replaced and _replaces(resource, change.changed.get(name, set())):
                change.replaced.add(name)
                grew = True
    return change


def _replaces(resource: Mapping[str, Any], changed: set[str]) -> bool:
    kind = str(resource.get("Type"))
    if changed & create_only(kind):
        return True
    return any(kind == k and prop in changed and (resource.get("UpdatePolicy") or {}).get(policy) is not True
               for (k, prop), policy in REPLACED_UNLESS.items())
