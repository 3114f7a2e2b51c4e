"""The rules template.yaml must keep, as functions over the parsed template that return
violations (empty list = compliant). tests/infra/ runs them on template.yaml and on small
bad templates (so each rule is shown to fail when broken); `make check-template` runs
them from the command line.

Two views are checked:
- the SAM source (what reviewers read): every Api event names the authorizer and a scope,
  every function has the layer, every parameter says what it is for;
- the CloudFormation that SAM generates (`translate`, the same translator the
  `AWS::Serverless` transform runs, offline): every method of the generated API
  definition carries the Cognito authorizer and scopes, and every IAM statement,
  including any SAM would generate, is no wider than needed.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from pathlib import Path
from typing import Any, Iterator, Mapping

# The MCP authorization server's routes (issue 15): public, since a client calls them to get
# its first token; served by OAUTH_FUNCTION only (oauth_facade_violations).
OAUTH_FUNCTION = "OAuthFunction"
OAUTH_TABLE = "OAuthStateTable"
OAUTH_TTL_ATTRIBUTE = "expires_at"  # xmemo.oauth.dynamo.TTL_ATTRIBUTE (tests/infra check they agree)
OAUTH_FACADE_ROUTES: frozenset[tuple[str, str]] = frozenset({
    ("GET", "/.well-known/oauth-authorization-server"),
    ("GET", "/.well-known/openid-configuration"),
    ("GET", "/oauth2/authorize"),
    ("GET", "/oauth2/callback"),
    ("POST", "/oauth2/register"),
    ("POST", "/oauth2/token"),
})
OAUTH_TABLE_ACTIONS = frozenset({"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem"})

# Routes that are public ON PURPOSE (no authorizer): RFC 9728 protected-resource metadata,
# which an MCP client must read before it has a token, and the authorization server above.
# Nothing else may be public.
PUBLIC_ROUTES: frozenset[tuple[str, str]] = frozenset(
    ("GET", path)
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/mcp/full",
    )
) | OAUTH_FACADE_ROUTES

# Scopes a route may require: `<ResourceServerId>/memory:<name>`.
SCOPE_NAMES = ("memory:read", "memory:write", "memory:temporary")
SCOPE_SOURCE = re.compile(r"^\$\{ResourceServerId\}/(memory:(?:read|write|temporary))$")

# The few AWS actions that accept only Resource "*" (no resource-level permissions). Each
# entry says why; anything else with Resource "*" is a violation.
STAR_RESOURCE_ACTIONS: dict[str, str] = {
    "xray:PutTraceSegments": "X-Ray has no resource-level permissions",
    "xray:PutTelemetryRecords": "X-Ray has no resource-level permissions",
}

LAYER = {"Ref": "XMemoLayer"}
RUNTIMES = ("python3.12", "python3.13")
AUTHORIZER = "CognitoAuthorizer"


# ---------------------------------------------------------------------------------------
# loading and translating
def load(path: Path) -> dict[str, Any]:
    """template.yaml as a dict, short-form intrinsics expanded (`!Ref x` -> {"Ref": x})."""
    from cfnlint.decode import decode

    template, matches = decode(str(path))
    if template is None:
        raise ValueError(f"{path}: {[str(m) for m in matches]}")
    return json.loads(json.dumps(template))  # plain dicts and lists


def translate(template: Mapping[str, Any], parameters: Mapping[str, str] | None = None,
              region: str = "us-east-1") -> dict[str, Any]:
    """The CloudFormation the `AWS::Serverless-2016-10-31` transform makes of `template`,
    offline. Local code paths become placeholder S3 URIs (as `sam package` would make them);
    managed policies resolve to nothing, so any SAM-generated role shows up bare."""
    import boto3
    from samtranslator.parser.parser import Parser
    from samtranslator.translator.translator import Translator

    doc = copy.deepcopy(dict(template))
    for name, resource in (doc.get("Resources") or {}).items():
        props = resource.get("Properties") or {}
        for key in ("CodeUri", "ContentUri"):
            if isinstance(props.get(key), str) and not props[key].startswith("s3://"):
                props[key] = f"s3://placeholder-bucket/{name}.zip"
    # A session only names the region (for pseudo parameters); no credentials are used.
    translator = Translator(None, Parser(), boto_session=boto3.session.Session(region_name=region))
    return translator.translate(doc, parameter_values=dict(parameters or {}), get_managed_policy_map=dict)


# ---------------------------------------------------------------------------------------
# helpers
def _resources(template: Mapping[str, Any], kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, resource in (template.get("Resources") or {}).items():
        if resource.get("Type") == kind:
            yield name, resource.get("Properties") or {}


def merge_globals(globals_value: Any, local: Any) -> Any:
    """SAM's Globals semantics: maps merge key by key, lists concatenate (Globals first),
    anything else is overridden by the resource's own value."""
    if isinstance(globals_value, dict) and isinstance(local, dict):
        keys = [*globals_value, *(k for k in local if k not in globals_value)]
        return {k: merge_globals(globals_value[k], local[k]) if k in globals_value and k in local
                else local.get(k, globals_value.get(k)) for k in keys}
    if isinstance(globals_value, list) and isinstance(local, list):
        return [*globals_value, *local]
    return local


def _function_props(template: Mapping[str, Any], props: Mapping[str, Any]) -> dict[str, Any]:
    globals_fn = (template.get("Globals") or {}).get("Function") or {}
    return merge_globals(dict(globals_fn), dict(props))


def _branches(value: Any) -> Iterator[Any]:
    """Every concrete alternative of a value under `Fn::If` (AWS::NoValue dropped)."""
    if isinstance(value, dict) and set(value) == {"Fn::If"}:
        _cond, yes, no = value["Fn::If"]
        yield from _branches(yes)
        yield from _branches(no)
    elif value == {"Ref": "AWS::NoValue"}:
        return
    else:
        yield value


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return [v for item in (value if isinstance(value, list) else [value]) for v in _branches(item)]


# ---------------------------------------------------------------------------------------
# rules over the SAM source
def api_events(template: Mapping[str, Any]) -> Iterator[tuple[str, str, str, str, dict[str, Any]]]:
    """(function, event id, METHOD, path, event Auth) for every Api event."""
    for name, props in _resources(template, "AWS::Serverless::Function"):
        for event_id, event in (props.get("Events") or {}).items():
            if event.get("Type") == "Api":
                ep = event.get("Properties") or {}
                yield name, event_id, str(ep.get("Method", "")).upper(), str(ep.get("Path", "")), ep.get("Auth") or {}


def route_violations(template: Mapping[str, Any]) -> list[str]:
    """Every Api event names the Cognito authorizer and at least one known scope, unless it
    is one of PUBLIC_ROUTES (which must then say `Authorizer: NONE` explicitly)."""
    out: list[str] = []
    apis = dict(_resources(template, "AWS::Serverless::Api"))
    for api_name, api in apis.items():
        authorizers = ((api.get("Auth") or {}).get("Authorizers")) or {}
        if AUTHORIZER not in authorizers or "UserPoolArn" not in authorizers[AUTHORIZER]:
            out.append(f"{api_name}: no Cognito user-pool authorizer named {AUTHORIZER}")
    for fn, event_id, method, path, auth in api_events(template):
        where = f"{fn}.{event_id} ({method} {path})"
        if (method, path) in PUBLIC_ROUTES:
            if auth.get("Authorizer") != "NONE":
                out.append(f"{where}: a public metadata route must say Authorizer: NONE")
            continue
        if auth.get("Authorizer") != AUTHORIZER:
            out.append(f"{where}: Authorizer must be {AUTHORIZER} (got {auth.get('Authorizer')!r})")
        scopes = auth.get("AuthorizationScopes") or []
        if not scopes:
            out.append(f"{where}: no AuthorizationScopes")
        for scope in scopes:
            text = scope.get("Fn::Sub") if isinstance(scope, dict) else scope
            if not isinstance(text, str) or not SCOPE_SOURCE.match(text):
                out.append(f"{where}: scope {scope!r} is not ${{ResourceServerId}}/memory:<read|write|temporary>")
    return out


def function_violations(template: Mapping[str, Any]) -> list[str]:
    """Every function: the shared layer, a recent Python runtime, arm64, active tracing and
    an explicit role (a SAM-generated role would carry a managed policy)."""
    out: list[str] = []
    for name, raw in _resources(template, "AWS::Serverless::Function"):
        props = _function_props(template, raw)
        if LAYER not in (props.get("Layers") or []):
            out.append(f"{name}: does not use the shared layer XMemoLayer")
        if props.get("Runtime") not in RUNTIMES:
            out.append(f"{name}: runtime {props.get('Runtime')!r} is not one of {RUNTIMES}")
        if props.get("Architectures") != ["arm64"]:
            out.append(f"{name}: not arm64")
        if props.get("Tracing") != "Active":
            out.append(f"{name}: X-Ray tracing is not Active")
        if "Role" not in props:
            out.append(f"{name}: no explicit least-privilege Role")
        if props.get("Policies"):
            out.append(f"{name}: inline Policies make SAM generate a role; use an explicit Role")
    return out


def parameter_violations(template: Mapping[str, Any]) -> list[str]:
    """Every parameter says what it is for; secret-looking ones are NoEcho."""
    out: list[str] = []
    for name, param in (template.get("Parameters") or {}).items():
        if not str(param.get("Description") or "").strip():
            out.append(f"parameter {name}: no Description")
        if re.search(r"secret|password|api_?key|private_?key", name, re.I) and str(param.get("NoEcho")).lower() != "true":
            out.append(f"parameter {name}: looks like a secret but is not NoEcho")
    return out


# ---------------------------------------------------------------------------------------
# rules over the generated CloudFormation
def translated_route_violations(cfn: Mapping[str, Any]) -> list[str]:
    """Every method of every generated API definition requires the Cognito authorizer with
    scopes (except PUBLIC_ROUTES, and CORS preflights, which this API does not have)."""
    out: list[str] = []
    for name, props in _resources(cfn, "AWS::ApiGateway::RestApi"):
        body = props.get("Body") or {}
        definitions = body.get("securityDefinitions") or {}
        cognito = definitions.get(AUTHORIZER) or {}
        if cognito.get("x-amazon-apigateway-authtype") != "cognito_user_pools":
            out.append(f"{name}: {AUTHORIZER} is not a cognito_user_pools authorizer")
        for path, methods in (body.get("paths") or {}).items():
            for method, op in methods.items():
                key = (method.upper(), path)
                if key in PUBLIC_ROUTES:
                    continue
                security = op.get("security") or []
                scopes = [s for entry in security for s in entry.get(AUTHORIZER, [])]
                if not any(AUTHORIZER in entry for entry in security):
                    out.append(f"{name}: {method.upper()} {path} is not behind {AUTHORIZER}")
                elif not scopes:
                    out.append(f"{name}: {method.upper()} {path} requires no scope")
    return out


def _policy_documents(cfn: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(where, policy document) for every identity and resource policy in the template."""
    for name, resource in (cfn.get("Resources") or {}).items():
        props = resource.get("Properties") or {}
        kind = resource.get("Type")
        if kind == "AWS::IAM::Role":
            yield f"{name} (trust)", props.get("AssumeRolePolicyDocument")
            for policy in _as_list(props.get("Policies")):
                yield f"{name}/{policy.get('PolicyName')}", policy.get("PolicyDocument")
        elif kind in ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy"):
            yield name, props.get("PolicyDocument")
        elif kind == "AWS::OpenSearchService::Domain":
            yield f"{name} (access policy)", props.get("AccessPolicies")
        elif kind in ("AWS::SNS::TopicPolicy", "AWS::SQS::QueuePolicy", "AWS::S3::BucketPolicy"):
            yield name, props.get("PolicyDocument")


def _is_star_principal(principal: Any) -> bool:
    if principal == "*":
        return True
    if isinstance(principal, dict):
        return any(v == "*" or (isinstance(v, list) and "*" in v) for v in principal.values())
    return False


def statement_violations(where: str, statement: Mapping[str, Any]) -> list[str]:
    """One statement: no wildcard action, no bare "*" resource outside the allow-list, no
    wildcard principal, no NotAction/NotResource/NotPrincipal on Allow."""
    if statement.get("Effect") != "Allow":
        return []  # a Deny can only narrow
    out: list[str] = []
    for negated in ("NotAction", "NotResource", "NotPrincipal"):
        if negated in statement:
            out.append(f"{where}: Allow with {negated} grants everything else")
    actions = [a for a in _as_list(statement.get("Action")) if isinstance(a, str)]
    for action in actions:
        if "*" in action:
            out.append(f"{where}: wildcard action {action!r}")
    resources = _as_list(statement.get("Resource"))
    if "*" in resources:
        wide = [a for a in actions if a not in STAR_RESOURCE_ACTIONS]
        if wide or not actions:
            out.append(f"{where}: Resource \"*\" for {wide or 'no named action'} (only {sorted(STAR_RESOURCE_ACTIONS)} may)")
    if "Principal" in statement and _is_star_principal(statement["Principal"]):
        out.append(f"{where}: wildcard principal")
    return out


def iam_violations(cfn: Mapping[str, Any]) -> list[str]:
    """Every statement of every policy document (both branches of each `Fn::If`), every
    role's managed policies (none allowed: they are wider than this service needs), and
    every Lambda permission (a named service principal and a source ARN)."""
    out: list[str] = []
    for where, document in _policy_documents(cfn):
        for doc in _as_list(document):
            if not isinstance(doc, dict):
                out.append(f"{where}: policy document is not an object")
                continue
            for statement in _as_list(doc.get("Statement")):
                out.extend(statement_violations(where, statement))
    for name, props in _resources(cfn, "AWS::IAM::Role"):
        if props.get("ManagedPolicyArns"):
            out.append(f"{name}: managed policies {props['ManagedPolicyArns']} (use a scoped inline policy)")
    for name, props in _resources(cfn, "AWS::Lambda::Permission"):
        if _is_star_principal(props.get("Principal")) or not str(props.get("Principal", "")).endswith(".amazonaws.com"):
            out.append(f"{name}: Lambda permission principal {props.get('Principal')!r} is not an AWS service")
        if "SourceArn" not in props:
            out.append(f"{name}: Lambda permission without SourceArn (any account's resource could invoke)")
    return out


def oauth_facade_violations(template: Mapping[str, Any]) -> list[str]:
    """The authorization server: every one of its routes exists, is served by
    OAUTH_FUNCTION and by nothing else; that function's role reaches only its own table with
    item reads and writes (besides logs and traces); the table expires items by TTL."""
    out: list[str] = []
    served: dict[tuple[str, str], list[str]] = {}
    for fn, _event_id, method, path, _auth in api_events(template):
        served.setdefault((method, path), []).append(fn)
    for route in sorted(OAUTH_FACADE_ROUTES):
        if served.get(route) != [OAUTH_FUNCTION]:
            out.append(f"{route[0]} {route[1]}: must be served by {OAUTH_FUNCTION} alone (got {served.get(route)})")
    for (method, path), functions in served.items():
        if OAUTH_FUNCTION in functions and (method, path) not in OAUTH_FACADE_ROUTES:
            out.append(f"{OAUTH_FUNCTION}: {method} {path} is not an authorization-server route")
    resources = template.get("Resources") or {}
    table = resources.get(OAUTH_TABLE) or {}
    ttl = (table.get("Properties") or {}).get("TimeToLiveSpecification") or {}
    if table.get("Type") != "AWS::DynamoDB::Table" or ttl.get("Enabled") is not True or ttl.get("AttributeName") != OAUTH_TTL_ATTRIBUTE:
        out.append(f"{OAUTH_TABLE}: a DynamoDB table with TTL enabled on {OAUTH_TTL_ATTRIBUTE} is required")
    role_ref = ((resources.get(OAUTH_FUNCTION) or {}).get("Properties") or {}).get("Role")
    role_name = role_ref.get("Fn::GetAtt", [None])[0] if isinstance(role_ref, dict) else None
    role = (resources.get(role_name) or {}).get("Properties") or {}
    table_arn = {"Fn::GetAtt": [OAUTH_TABLE, "Arn"]}
    for policy in _as_list(role.get("Policies")):
        for statement in _as_list((policy.get("PolicyDocument") or {}).get("Statement")):
            actions = set(_as_list(statement.get("Action")))
            if any(a.startswith("dynamodb:") for a in actions):
                if not actions <= OAUTH_TABLE_ACTIONS or _as_list(statement.get("Resource")) != [table_arn]:
                    out.append(f"{role_name}: DynamoDB access must be {sorted(OAUTH_TABLE_ACTIONS)} on {OAUTH_TABLE} only")
            elif not actions <= {"logs:CreateLogStream", "logs:PutLogEvents", *STAR_RESOURCE_ACTIONS}:
                out.append(f"{role_name}: {sorted(actions)} is more than the authorization server needs")
    if not role:
        out.append(f"{OAUTH_FUNCTION}: no explicit role of this template")
    return out


# ---------------------------------------------------------------------------------------
def all_violations(template: Mapping[str, Any], parameters: Mapping[str, str] | None = None) -> list[str]:
    cfn = translate(template, parameters)
    return (
        route_violations(template)
        + function_violations(template)
        + parameter_violations(template)
        + translated_route_violations(cfn)
        + iam_violations(cfn)
        + oauth_facade_violations(template)
    )


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    path = Path(args[0] if args else "template.yaml")
    problems = all_violations(load(path))
    for problem in problems:
        print(problem)
    print(f"{path}: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
