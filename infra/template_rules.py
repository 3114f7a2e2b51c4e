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
    # CORS preflights, answered by the authorization server itself (xmemo.oauth.facade.CORS_METHODS)
    ("OPTIONS", "/.well-known/oauth-authorization-server"),
    ("OPTIONS", "/.well-known/openid-configuration"),
    ("OPTIONS", "/oauth2/register"),
    ("OPTIONS", "/oauth2/token"),
})
OAUTH_TABLE_ACTIONS = frozenset({"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "dynamodb:UpdateItem"})

# Routes that are public ON PURPOSE (no authorizer): RFC 9728 protected-resource metadata,
# which an MCP client must read before it has a token, the authorization server above, and
# the memory console's static files, which a browser loads before anyone signs in (they hold
# no data). Nothing else may be public.
PUBLIC_ROUTES: frozenset[tuple[str, str]] = frozenset(
    ("GET", path)
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource/mcp/full",
        "/console",
        "/console/{asset}",
    )
) | frozenset(  # and the CORS preflights of the resource metadata
    ("OPTIONS", f"/.well-known/oauth-protected-resource{suffix}") for suffix in ("", "/mcp", "/mcp/full")
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

# Roles that may carry one AWS-managed policy, and why (iam_violations).
API_LOGS_ROLE = "ApiGatewayLogsRole"
API_LOGS_POLICY = {"Fn::Sub": "arn:${AWS::Partition}:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"}
MANAGED_POLICY_EXCEPTIONS: dict[str, Any] = {
    # The account-wide API Gateway logs role serves every API of the region, whatever their log
    # groups are named; AWS maintains this policy for exactly that role.
    API_LOGS_ROLE: API_LOGS_POLICY,
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
        if resource.get("Type") == "AWS::Lambda::Function" and isinstance(props.get("Code"), str):
            props["Code"] = {"S3Bucket": "placeholder-bucket", "S3Key": f"{name}.zip"}  # as `sam package` writes it
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


# Functions that must NOT carry the layer, and why.
LAYERLESS: dict[str, str] = {
    "PreTokenFunction": "runs inside every token request: standard library and boto3 only, small cold start",
}


def function_violations(template: Mapping[str, Any]) -> list[str]:
    """Every function: the shared layer (LAYERLESS ones none), a recent Python runtime, arm64,
    active tracing and an explicit role (a SAM-generated role would carry a managed policy).
    LAYERLESS functions are plain AWS::Lambda::Function: SAM's Globals cannot reach them."""
    out: list[str] = []
    for name, props in _resources(template, "AWS::Lambda::Function"):
        if name not in LAYERLESS:
            out.append(f"{name}: a plain Lambda function outside SAM's Globals (only {sorted(LAYERLESS)} may be)")
        if props.get("Layers"):
            out.append(f"{name}: carries a layer ({LAYERLESS.get(name, 'not allowed')})")
        if props.get("Runtime") not in RUNTIMES:
            out.append(f"{name}: runtime {props.get('Runtime')!r} is not one of {RUNTIMES}")
        if props.get("Architectures") != ["arm64"]:
            out.append(f"{name}: not arm64")
        if (props.get("TracingConfig") or {}).get("Mode") != "Active":
            out.append(f"{name}: X-Ray tracing is not Active")
        if "Role" not in props:
            out.append(f"{name}: no explicit least-privilege Role")
    for name, raw in _resources(template, "AWS::Serverless::Function"):
        props = _function_props(template, raw)
        if name in LAYERLESS:
            out.append(f"{name}: must be a plain AWS::Lambda::Function (Globals would add the layer)")
        elif LAYER not in (props.get("Layers") or []):
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
    scopes, except PUBLIC_ROUTES (the authorization server's CORS preflights among them)."""
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
        arns = props.get("ManagedPolicyArns")
        if arns and arns != [MANAGED_POLICY_EXCEPTIONS.get(name)]:
            out.append(f"{name}: managed policies {arns} (use a scoped inline policy)")
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
# deployment rules (issue 14): what an operator signs off for paying teams. Each takes the
# SAM source (plus the translation where SAM generates the resource) and names what broke.
def resolve(value: Any, truth: Mapping[str, bool]) -> Any:
    """`value` with every `Fn::If` decided by `truth` (condition -> bool) and AWS::NoValue
    entries dropped, as CloudFormation would render it for that choice of conditions."""
    none = {"Ref": "AWS::NoValue"}
    if isinstance(value, dict):
        if set(value) == {"Fn::If"}:
            cond, yes, no = value["Fn::If"]
            return resolve(yes if truth[cond] else no, truth)
        return {k: r for k, r in ((k, resolve(v, truth)) for k, v in value.items()) if r != none}
    if isinstance(value, list):
        return [r for r in (resolve(v, truth) for v in value) if r != none]
    return value


def _props(template: Mapping[str, Any], name: str) -> dict[str, Any]:
    return ((template.get("Resources") or {}).get(name) or {}).get("Properties") or {}


def _param(template: Mapping[str, Any], name: str) -> dict[str, Any]:
    return (template.get("Parameters") or {}).get(name) or {}


def _refs(value: Any) -> set[str]:
    """Every logical id or parameter `value` references (Ref, GetAtt, ${...} in Sub)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "Ref" and isinstance(inner, str):
                found.add(inner)
            elif key == "Fn::GetAtt":
                found.add(inner[0] if isinstance(inner, list) else str(inner).split(".")[0])
            elif key == "Fn::Sub":
                text = inner[0] if isinstance(inner, list) else inner
                found |= {m.split(".")[0] for m in re.findall(r"\$\{([^}!]+)\}", text)}
                if isinstance(inner, list):
                    found |= _refs(inner[1])
            else:
                found |= _refs(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= _refs(inner)
    return found


def _alarms(template: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return dict(_resources(template, "AWS::CloudWatch::Alarm"))


def _alarm_metrics(props: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """(metric name, dimensions) of an alarm, single metric or metric math."""
    out = [(props["MetricName"], props.get("Dimensions") or [])] if props.get("MetricName") else []
    for query in props.get("Metrics") or []:
        metric = (query.get("MetricStat") or {}).get("Metric") or {}
        if metric.get("MetricName"):
            out.append((metric["MetricName"], metric.get("Dimensions") or []))
    return out


# 1. alarms that can notify ------------------------------------------------------------------
REQUIRED_STORE_ALARMS = ("JVMMemoryPressure", "CPUUtilization", "CPUCreditBalance", "AutomatedSnapshotFailure",
                         "ClusterStatus.red", "FreeStorageSpace")
ALARM_TOPIC = "AlarmTopic"


def alarm_violations(template: Mapping[str, Any]) -> list[str]:
    """The alarm topic is one CloudWatch can publish to (no AWS-managed key; a template key
    whose policy admits cloudwatch.amazonaws.com), every alarm notifies it, and the alarms
    cover the store's memory, CPU, CPU credits, snapshots, the pre-token trigger and p95/p99."""
    out: list[str] = []
    key = _props(template, ALARM_TOPIC).get("KmsMasterKeyId")
    if isinstance(key, str):
        out.append(f"{ALARM_TOPIC}: KmsMasterKeyId {key!r} - CloudWatch cannot use an AWS-managed or outside key")
    elif key is not None:
        (key_name,) = _refs(key) or {"?"}
        statements = _as_list((_props(template, key_name).get("KeyPolicy") or {}).get("Statement"))
        admits = any(s.get("Effect") == "Allow" and (s.get("Principal") or {}).get("Service") == "cloudwatch.amazonaws.com"
                     and {"kms:Decrypt"} <= set(_as_list(s.get("Action")))
                     and any(str(a).startswith("kms:GenerateDataKey") for a in _as_list(s.get("Action")))
                     for s in statements)
        if not admits:
            out.append(f"{ALARM_TOPIC}: key {key_name} does not let cloudwatch.amazonaws.com Decrypt and GenerateDataKey")
    alarms = _alarms(template)
    for name, props in alarms.items():
        if {"Ref": ALARM_TOPIC} not in (props.get("AlarmActions") or []):
            out.append(f"{name}: does not notify {ALARM_TOPIC}")
    metrics = {(m, name) for name, props in alarms.items() for m, _ in _alarm_metrics(props)}
    for metric in REQUIRED_STORE_ALARMS:
        if not any(m == metric for m, _ in metrics):
            out.append(f"no alarm on the store's {metric}")
    trigger = [name for name, props in alarms.items() for m, dims in _alarm_metrics(props)
               if m == "Errors" and any(d.get("Value") == {"Ref": "PreTokenFunction"} for d in dims)]
    if not trigger:
        out.append("no alarm on the pre-token trigger's Errors (no token is issued while it fails)")
    latency = {props.get("ExtendedStatistic") for props in alarms.values() if props.get("MetricName") == "Latency"}
    for stat in ("p95", "p99"):
        if stat not in latency:
            out.append(f"no alarm on the API's {stat} Latency")
    return out


# 2. a store that survives a node ------------------------------------------------------------
PROFILES = ("dev", "production")
AVAILABILITY_ZONES = 3
GRAVITON_FAMILIES = ("m7g", "r7g", "c7g", "m8g", "r8g", "c8g")  # current Graviton (3 and 4) families
SNAPSHOT_REPOSITORY = "xmemo-s3"
DOMAIN = "OpenSearchDomain"
INDEX_RESOURCE = "OpenSearchIndex"


def _profile_truth(template: Mapping[str, Any], profile: str) -> dict[str, bool]:
    """Condition values for a created domain under `profile` (the default everything else)."""
    production = profile == "production"
    truth = {name: False for name in template.get("Conditions") or {}}
    truth.update(CreateDomain=True, IsServerless=False, IsManagedDomain=True, IsProduction=production,
                 ProductionDomain=production, DevDomain=not production, CreateUserPool=True)
    return truth


def _value_of(template: Mapping[str, Any], value: Any) -> list[Any]:
    """The values a property can take: a literal, or every allowed value of the parameter it names."""
    if isinstance(value, dict) and set(value) == {"Ref"} and value["Ref"] in (template.get("Parameters") or {}):
        param = _param(template, value["Ref"])
        return list(param.get("AllowedValues") or [param.get("Default")])
    return [value]


def store_violations(template: Mapping[str, Any]) -> list[str]:
    """`Profile` offers dev and production; production is three AZs, data nodes of a current
    Graviton family in multiples of three (counts zone awareness cannot place are not
    offered), three dedicated masters and at least one replica; replicas follow the profile
    into the live index (the custom resource); snapshots go to an S3 repository it registers."""
    out: list[str] = []
    if set(_param(template, "Profile").get("AllowedValues") or []) != set(PROFILES):
        out.append(f"parameter Profile must offer {PROFILES}")
        return out
    raw = _props(template, DOMAIN)
    cluster = resolve(raw.get("ClusterConfig") or {}, _profile_truth(template, "production"))
    zones = (cluster.get("ZoneAwarenessConfig") or {}).get("AvailabilityZoneCount")
    if cluster.get("ZoneAwarenessEnabled") is not True or zones != AVAILABILITY_ZONES:
        out.append(f"{DOMAIN}: production is not zone-aware across {AVAILABILITY_ZONES} AZs")
    for count in _value_of(template, cluster.get("InstanceCount")):
        if not isinstance(count, (int, str)) or int(count) < AVAILABILITY_ZONES or int(count) % AVAILABILITY_ZONES:
            out.append(f"{DOMAIN}: production offers {count} data nodes, which {AVAILABILITY_ZONES} AZs cannot place evenly")
    for kind in _value_of(template, cluster.get("InstanceType")):
        if not str(kind).startswith(tuple(f"{f}." for f in GRAVITON_FAMILIES)):
            out.append(f"{DOMAIN}: production data-node type {kind} is not a current Graviton family")
    if cluster.get("DedicatedMasterEnabled") is not True or cluster.get("DedicatedMasterCount") != 3:
        out.append(f"{DOMAIN}: production has no three dedicated masters")
    dev = resolve(raw.get("ClusterConfig") or {}, _profile_truth(template, "dev"))
    if dev.get("ZoneAwarenessEnabled") is not False and dev.get("InstanceCount") == 1:
        out.append(f"{DOMAIN}: a one-node dev domain cannot be zone-aware")
    replicas = ((template.get("Mappings") or {}).get("Profiles") or {})
    if int((replicas.get("production") or {}).get("Replicas", 0)) < 1:
        out.append("Mappings.Profiles.production: no replica")
    if int((replicas.get("dev") or {}).get("Replicas", 1)) != 0:
        out.append("Mappings.Profiles.dev: a one-node domain cannot place a replica (it would stay yellow)")
    follow = {"Fn::FindInMap": ["Profiles", {"Ref": "Profile"}, "Replicas"]}
    index = _props(template, INDEX_RESOURCE)
    if index.get("Replicas") != follow:
        out.append(f"{INDEX_RESOURCE}: Replicas does not follow the profile (the live index keeps its creation-time replicas)")
    env = ((((template.get("Globals") or {}).get("Function") or {}).get("Environment") or {}).get("Variables") or {})
    if env.get("XMEMO_OPENSEARCH_REPLICAS") != follow:
        out.append("Globals: XMEMO_OPENSEARCH_REPLICAS is not the profile's replicas")
    repo = resolve(index.get("SnapshotRepository") or {}, _profile_truth(template, "dev"))
    if repo.get("Name") != SNAPSHOT_REPOSITORY or not repo.get("Bucket") or not repo.get("RoleArn"):
        out.append(f"{INDEX_RESOURCE}: registers no S3 snapshot repository {SNAPSHOT_REPOSITORY} (name, bucket, role)")
    else:
        (bucket,) = _refs(repo["Bucket"]) or {"?"}
        (role,) = _refs(repo["RoleArn"]) or {"?"}
        if (template["Resources"].get(bucket) or {}).get("Type") != "AWS::S3::Bucket":
            out.append(f"{INDEX_RESOURCE}: snapshot bucket {bucket} is not a bucket of this template")
        elif (template["Resources"][bucket].get("DeletionPolicy")) not in ("Retain", "RetainExceptOnCreate"):
            out.append(f"{bucket}: snapshots must outlive the stack (DeletionPolicy)")
        trust = _as_list((_props(template, role).get("AssumeRolePolicyDocument") or {}).get("Statement"))
        if not any((s.get("Principal") or {}).get("Service") == "es.amazonaws.com" for s in trust):
            out.append(f"{INDEX_RESOURCE}: snapshot role {role} is not assumable by es.amazonaws.com")
    return out


# 3. throttling per caller and a web ACL -----------------------------------------------------
def throttle_violations(template: Mapping[str, Any]) -> list[str]:
    """A regional web ACL on the API stage with a rate rule per Authorization header, one per
    IP and the AWS common rule set; and the throttle parameters say what `/*` `*` does (each
    method its own bucket), not "all routes together"."""
    out: list[str] = []
    acls = dict(_resources(template, "AWS::WAFv2::WebACL"))
    rules_of = {name: props.get("Rules") or [] for name, props in acls.items() if props.get("Scope") == "REGIONAL"}
    associated = {
        acl for _n, props in _resources(template, "AWS::WAFv2::WebACLAssociation")
        for acl in _refs(props.get("WebACLArn"))
        if {"XMemoApi", "XMemoApi.Stage"} <= {*_refs(props.get("ResourceArn")),
                                              *re.findall(r"\$\{([^}]+)\}", json.dumps(props.get("ResourceArn")))}
    }
    live = {name: rules for name, rules in rules_of.items() if name in associated}
    if not live:
        return ["no regional WAF web ACL is associated with the XMemoApi stage"]
    statements = [(r.get("Name"), r.get("Action") or {}, r.get("Statement") or {}) for rules in live.values() for r in rules]

    def rate(kind: str) -> bool:
        for _name, action, statement in statements:
            rb = statement.get("RateBasedStatement") or {}
            if "Block" not in action or not rb:
                continue
            if kind == "IP" and rb.get("AggregateKeyType") == "IP":
                return True
            headers = [str(((k.get("Header") or {}).get("Name") or "")).lower() for k in rb.get("CustomKeys") or []]
            if kind == "token" and rb.get("AggregateKeyType") == "CUSTOM_KEYS" and headers == ["authorization"]:
                return True
        return False

    if not rate("token"):
        out.append("web ACL: no blocking rate-based rule keyed on the Authorization header alone")
    if not rate("IP"):
        out.append("web ACL: no blocking rate-based rule per IP")
    if not any((s.get("ManagedRuleGroupStatement") or {}).get("Name") == "AWSManagedRulesCommonRuleSet"
               and (s["ManagedRuleGroupStatement"].get("VendorName") == "AWS") for _n, _a, s in statements):
        out.append("web ACL: no AWS managed common rule set (AWSManagedRulesCommonRuleSet)")
    for _name, api in _resources(template, "AWS::Serverless::Api"):
        for setting in api.get("MethodSettings") or []:
            if setting.get("ResourcePath") == "/*" and setting.get("HttpMethod") == "*":
                for key in ("ThrottlingRateLimit", "ThrottlingBurstLimit"):
                    for param in _refs(setting.get(key)):
                        words = str(_param(template, param).get("Description") or "").lower()
                        if "all routes together" in words or "each route" not in words:
                            out.append(f"parameter {param}: `/*` `*` gives each route and method its own bucket; "
                                       "the description must say so (\"each route\")")
    return out


# 4. the store readable only by the functions that need it -----------------------------------
STORE_VERBS: dict[str, frozenset[str]] = {  # role -> the only HTTP verbs it may use on the domain
    "ApiFunctionRole": frozenset({"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"}),
    "PurgeRole": frozenset({"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost"}),
    "IndexInitRole": frozenset({"es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut"}),
}
STORE_LOGS = ("ES_APPLICATION_LOGS", "SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS")


def _sub_text(value: Any) -> str:
    return value["Fn::Sub"][0] if isinstance(value, dict) and isinstance(value.get("Fn::Sub"), list) else \
        (value.get("Fn::Sub") if isinstance(value, dict) else str(value))


def store_access_violations(template: Mapping[str, Any]) -> list[str]:
    """The created domain's policy: one Allow per store role with exactly its verbs, on named
    paths (never the whole domain), only this domain; an explicit Deny of es:ESHttp* for
    every other principal; application and slow logs published to CloudWatch (audit logs
    need fine-grained access control, which the IAM policy replaces here)."""
    out: list[str] = []
    props = _props(template, DOMAIN)
    truth = _profile_truth(template, "production")
    statements = resolve((props.get("AccessPolicies") or {}).get("Statement") or [], {**truth, "HasStoreAdmin": False})
    allows = [s for s in statements if s.get("Effect") == "Allow"]
    for role, verbs in STORE_VERBS.items():
        mine = [s for s in allows if (s.get("Principal") or {}).get("AWS") == {"Fn::GetAtt": [role, "Arn"]}]
        if len(mine) != 1:
            out.append(f"{DOMAIN}: {role} needs exactly one statement of its own (found {len(mine)})")
            continue
        actions = set(_as_list(mine[0].get("Action")))
        if actions != verbs:
            out.append(f"{DOMAIN}: {role} may use {sorted(actions)}; only {sorted(verbs)}")
        for resource in _as_list(mine[0].get("Resource")):
            text = _sub_text(resource)
            if not text.startswith("arn:${AWS::Partition}:es:${AWS::Region}:${AWS::AccountId}:domain/xmemo-${Id}/"):
                out.append(f"{DOMAIN}: {role} resource {text!r} is not a path of this domain")
            elif text.endswith("/*"):
                out.append(f"{DOMAIN}: {role} may reach every path of the domain ({text!r})")
    others = [s for s in allows if not any((s.get("Principal") or {}).get("AWS") == {"Fn::GetAtt": [r, "Arn"]} for r in STORE_VERBS)]
    for s in others:
        out.append(f"{DOMAIN}: an Allow for {s.get('Principal')} (only the store roles, and the optional break-glass role)")
    denies = [s for s in statements if s.get("Effect") == "Deny" and s.get("Principal") in ({"AWS": "*"}, "*")
              and set(_as_list(s.get("Action"))) & {"es:ESHttp*", "es:*"}]
    admitted = [set(map(json.dumps, _as_list(((s.get("Condition") or {}).get("StringNotEquals") or {}).get("aws:PrincipalArn"))))
                for s in denies]
    roles = {json.dumps({"Fn::GetAtt": [r, "Arn"]}) for r in STORE_VERBS}
    if not any(a == roles for a in admitted):
        out.append(f"{DOMAIN}: no Deny of es:ESHttp* for every principal but the store roles (aws:PrincipalArn)")
    logs = props.get("LogPublishingOptions") or {}
    for kind in STORE_LOGS:
        if (logs.get(kind) or {}).get("Enabled") is not True or not (logs.get(kind) or {}).get("CloudWatchLogsLogGroupArn"):
            out.append(f"{DOMAIN}: {kind} are not published to CloudWatch Logs")
    fgac = (props.get("AdvancedSecurityOptions") or {}).get("Enabled") is True
    if fgac and (logs.get("AUDIT_LOGS") or {}).get("Enabled") is not True:
        out.append(f"{DOMAIN}: fine-grained access control without AUDIT_LOGS")
    return out


# 5. interactive login that loads ------------------------------------------------------------
MAX_DEFAULT_TOKEN_MINUTES = 60


def login_violations(template: Mapping[str, Any]) -> list[str]:
    """Managed login v2 has a branding for the interactive (code-flow) client, people use MFA,
    and access tokens default to at most an hour."""
    out: list[str] = []
    domains = dict(_resources(template, "AWS::Cognito::UserPoolDomain"))
    brandings = [props for _n, props in _resources(template, "AWS::Cognito::ManagedLoginBranding")]
    for name, props in _resources(template, "AWS::Cognito::UserPoolClient"):
        if "code" not in (props.get("AllowedOAuthFlows") or []):
            continue
        if any(str(d.get("ManagedLoginVersion")) == "2" for d in domains.values()):
            styled = [b for b in brandings if b.get("ClientId") == {"Ref": name}
                      and (b.get("UseCognitoProvidedValues") is True or b.get("Settings"))]
            if not styled:
                out.append(f"{name}: managed login v2 without an AWS::Cognito::ManagedLoginBranding (error page)")
    for name, props in _resources(template, "AWS::Cognito::UserPool"):
        if props.get("MfaConfiguration") != "ON":
            out.append(f"{name}: MfaConfiguration is {props.get('MfaConfiguration')!r}, not ON")
    for name, props in _resources(template, "AWS::Cognito::UserPoolClient"):
        validity = props.get("AccessTokenValidity")
        minutes = [int(v) for v in _value_of(template, validity)] if validity is not None else [60]
        if isinstance(validity, dict) and "Ref" in validity:
            minutes = [int(_param(template, validity["Ref"]).get("Default", 0))]
        unit = (props.get("TokenValidityUnits") or {}).get("AccessToken", "hours")
        if unit != "minutes" or max(minutes) > MAX_DEFAULT_TOKEN_MINUTES:
            out.append(f"{name}: access tokens default to {minutes} {unit} (at most {MAX_DEFAULT_TOKEN_MINUTES} minutes)")
    return out


# 6. safe to create, fail and create again ---------------------------------------------------
KEPT = ("Retain", "RetainExceptOnCreate")
CUSTOM_RESOURCE_WAIT_S = 3600  # CloudFormation's wait for a custom resource without ServiceTimeout


def lifecycle_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """The domain is RetainExceptOnCreate with a stack-derived name; the account-wide API
    Gateway role is opt-in and the stage waits for it; every Lambda-backed custom resource
    has a ServiceTimeout covering its function; log groups have a retention, are kept when
    the stack goes and have no fixed name (a kept group would block a stack created again)."""
    out: list[str] = []
    domain = (template.get("Resources") or {}).get(DOMAIN) or {}
    if domain.get("DeletionPolicy") != "RetainExceptOnCreate":
        out.append(f"{DOMAIN}: DeletionPolicy {domain.get('DeletionPolicy')!r} (RetainExceptOnCreate: a failed create must not block the retry)")
    if "AWS::StackId" not in _refs(_props(template, DOMAIN).get("DomainName")):
        out.append(f"{DOMAIN}: DomainName is not derived from AWS::StackId (a retained domain blocks the next stack)")
    if _param(template, "ConfigureApiGatewayLogsRole").get("Default") != "false":
        out.append("parameter ConfigureApiGatewayLogsRole: must default to \"false\" (it replaces an account-wide role)")
    stages = [name for name, _p in _resources(cfn, "AWS::ApiGateway::Stage")]
    for stage in stages:
        resource = cfn["Resources"][stage]
        if "ApiGatewayAccount" not in {*_refs(resource.get("Properties")), *_as_list(resource.get("DependsOn"))}:
            out.append(f"{stage}: does not wait for ApiGatewayAccount when the stack sets the logs role")
    functions = {name: resource for name, resource in (cfn.get("Resources") or {}).items()
                 if resource.get("Type") == "AWS::Lambda::Function"}
    for name, resource in (cfn.get("Resources") or {}).items():
        kind = str(resource.get("Type"))
        if not (kind.startswith("Custom::") or kind == "AWS::CloudFormation::CustomResource"):
            continue
        props = resource.get("Properties") or {}
        target = (_refs(props.get("ServiceToken")) & set(functions)) or {None}
        (fn,) = target
        timeout = int(((functions.get(fn) or {}).get("Properties") or {}).get("Timeout", 3))
        wait = props.get("ServiceTimeout")
        if wait is None:
            out.append(f"{name}: no ServiceTimeout (CloudFormation waits {CUSTOM_RESOURCE_WAIT_S} s for a lost answer)")
        elif not timeout <= int(wait) < CUSTOM_RESOURCE_WAIT_S:
            out.append(f"{name}: ServiceTimeout {wait} s does not cover {fn}'s {timeout} s")
    for name, resource in (template.get("Resources") or {}).items():
        if resource.get("Type") != "AWS::Logs::LogGroup":
            continue
        props = resource.get("Properties") or {}
        if "RetentionInDays" not in props:
            out.append(f"{name}: no RetentionInDays (logs kept forever)")
        if resource.get("DeletionPolicy") not in KEPT:
            out.append(f"{name}: deleted with the stack (DeletionPolicy {resource.get('DeletionPolicy')!r})")
        if "LogGroupName" in props:
            out.append(f"{name}: a fixed LogGroupName blocks a stack created again under the same name")
    return out


# 7. smaller items ---------------------------------------------------------------------------
NEWEST_ENGINE = (3, 3)  # OpenSearch_3.3: the newest OpenSearch Service offers (docs/deploy.md)
QUOTED_CONTEXT = ("$context.error.messageString",)  # API Gateway renders these as JSON strings


def render_gateway_body(body: str) -> str:
    """A gateway response template as API Gateway fills it in."""
    for name in QUOTED_CONTEXT:
        body = body.replace(name, json.dumps('a "quoted" message'))
    return re.sub(r"\$context\.[A-Za-z.]+", "x", body)


def small_item_violations(template: Mapping[str, Any]) -> list[str]:
    """Gateway response bodies are valid JSON as rendered; the pre-token trigger carries no
    layer and nothing of the store, and has reserved concurrency; the asynchronous purge has
    a dead-letter target; the engine default is the newest OpenSearch."""
    out: list[str] = []
    for name, api in _resources(template, "AWS::Serverless::Api"):
        for kind, response in (api.get("GatewayResponses") or {}).items():
            for media, body in (response.get("ResponseTemplates") or {}).items():
                try:
                    json.loads(render_gateway_body(body))
                except ValueError as exc:
                    out.append(f"{name}.{kind} ({media}): renders invalid JSON ({exc})")
    trigger = (template.get("Resources") or {}).get("PreTokenFunction") or {}
    props = trigger.get("Properties") or {}
    if trigger.get("Type") == "AWS::Serverless::Function":
        props = _function_props(template, props)
    if props.get("Layers"):
        out.append("PreTokenFunction: carries a layer (every token request pays its cold start)")
    if {DOMAIN, "ExistingOpenSearchEndpoint"} & _refs(props):
        out.append("PreTokenFunction: references the store (the user pool would wait for the domain)")
    if "ReservedConcurrentExecutions" not in props:
        out.append("PreTokenFunction: no ReservedConcurrentExecutions")
    purge = _props(template, "PurgeFunction")
    if not purge.get("DeadLetterQueue") and not (purge.get("EventInvokeConfig") or {}).get("DestinationConfig"):
        out.append("PurgeFunction: asynchronous invocations without a dead-letter target")
    version = str(_param(template, "OpenSearchEngineVersion").get("Default", ""))
    found = re.match(r"^OpenSearch_(\d+)\.(\d+)$", version)
    if not found or tuple(map(int, found.groups())) < NEWEST_ENGINE:
        out.append(f"parameter OpenSearchEngineVersion: default {version!r} is older than OpenSearch_{NEWEST_ENGINE[0]}.{NEWEST_ENGINE[1]}")
    return out


# 8. scanned like operators scan ------------------------------------------------------------
def checkov_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """Checkov over the source and the translation: every failed check not in the explained
    skip list of infra/checkov_scan.py, and every skip no check needs any more."""
    from infra import checkov_scan  # needs .venv-checkov; imported only when asked for

    return checkov_scan.violations(checkov_scan.scan_template(template, cfn))


# SnapStart on published versions, off only where the SnapStart parameter says the region lacks it.
SNAPSTART_SWITCH = {"Fn::If": ["UseSnapStart", "PublishedVersions", "None"]}


def snapstart_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """Issue 13: every function behind an API route starts from a SnapStart snapshot, which
    only published versions have, so it publishes one under an alias (AutoPublishAlias) and
    every generated API integration invokes that alias, never the unpublished $LATEST."""
    out: list[str] = []
    for name, raw in _resources(template, "AWS::Serverless::Function"):
        props = _function_props(template, raw)
        if not any((e or {}).get("Type") == "Api" for e in (props.get("Events") or {}).values()):
            continue
        if not props.get("AutoPublishAlias"):
            out.append(f"{name}: serves API routes without AutoPublishAlias (SnapStart needs a published version)")
        if (props.get("SnapStart") or {}).get("ApplyOn") not in ("PublishedVersions", SNAPSTART_SWITCH):
            out.append(f"{name}: serves API routes without SnapStart on its published versions")
    for api, props in _resources(cfn, "AWS::ApiGateway::RestApi"):
        for path, methods in ((props.get("Body") or {}).get("paths") or {}).items():
            for method, op in methods.items():
                uri = _sub_text((op.get("x-amazon-apigateway-integration") or {}).get("uri"))
                if ":lambda:path/" in uri and "Alias" not in uri:
                    out.append(f"{api}: {method.upper()} {path} invokes a function's $LATEST, not its alias")
    return out


# ---------------------------------------------------------------------------------------
# A deployment that survives its second `sam deploy` (issue 38): what the operator's review
# with cfn-lint and the SAM translator found. Each rule names the one place it broke.

# 1. code changes go live --------------------------------------------------------------------
RELEASE_SETTINGS = "ReleaseSettings"
RELEASE_VALUE = {"Fn::GetAtt": [RELEASE_SETTINGS, "Value"]}
RELEASE_ENV = "RELEASE_SETTINGS"
VERSION_DESCRIPTION_LIMIT = 256  # characters of a Lambda version's description
# Function properties that are not part of a published version (they apply to all of them).
UNVERSIONED = frozenset({"ReservedConcurrentExecutions", "Tags", "Description"})
# Parameters that reach the functions without being in ReleaseSettings (their values could not
# all fit a version description): changing one needs the procedure in docs/deploy.md, which
# changes ReleaseLabel in the same deployment. Each names why it is left out.
REPUBLISH_PROCEDURES: dict[str, str] = {
    "ExistingUserPoolId": "moves the stack to another user pool: tokens, clients and the hosted domain change with it",
    "AuthDomainPrefix": "the hosted domain cannot be replaced in place (see PARAMETER_PROCEDURES)",
    "ExistingOpenSearchEndpoint": "moves the stack to another store: the memories stay where they are",
}


def _max_length(template: Mapping[str, Any], name: str) -> int | None:
    """The longest value parameter `name` admits, from its AllowedValues or MaxLength."""
    param = _param(template, name)
    if param.get("AllowedValues"):
        return max(len(str(v)) for v in param["AllowedValues"])
    if param.get("MaxLength") is not None:
        return int(param["MaxLength"])
    found = re.search(r"\{\d+,(\d+)\}\$\"?$", str(param.get("AllowedPattern", "")))
    return int(found.group(1)) if found else None


def release_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """A change of the code, of a layer, of a function's configuration or of a parameter that
    reaches a function publishes a new version and moves the alias: AutoPublishAliasAllProperties,
    layers that publish and are named directly (SAM ignores a layer under Fn::If), every version's
    description and every function's environment carrying ReleaseSettings, whose parameters are
    exactly those that reach a function (bar REPUBLISH_PROCEDURES) and fit a description."""
    from infra.changes import change_of

    out: list[str] = []
    for name, props in _resources(template, "AWS::Serverless::LayerVersion"):
        if props.get("PublishLambdaVersion") is not True:
            out.append(f"{name}: no PublishLambdaVersion (a new layer version leaves the alias on the old code)")
    for name, raw in _resources(template, "AWS::Serverless::Function"):
        props = _function_props(template, raw)
        if not props.get("AutoPublishAlias"):
            continue
        if props.get("AutoPublishAliasAllProperties") is not True:
            out.append(f"{name}: no AutoPublishAliasAllProperties (a changed function publishes no version)")
        for layer in props.get("Layers") or []:
            if not (isinstance(layer, dict) and set(layer) == {"Ref"}):
                out.append(f"{name}: layer {layer} is not a plain Ref (SAM publishes no version when it changes)")
        if props.get("VersionDescription") != RELEASE_VALUE:
            out.append(f"{name}: VersionDescription is not {RELEASE_SETTINGS}.Value (a parameter change publishes nothing)")
        if ((props.get("Environment") or {}).get("Variables") or {}).get(RELEASE_ENV) != RELEASE_VALUE:
            out.append(f"{name}: environment lacks {RELEASE_ENV} (Lambda publishes no version of an unchanged function)")
    listed = {r for r in _refs(_props(template, RELEASE_SETTINGS).get("Value")) if r in (template.get("Parameters") or {})}
    longest = [_max_length(template, p) for p in sorted(listed)]
    if None in longest:
        out.append(f"{RELEASE_SETTINGS}: {[p for p, n in zip(sorted(listed), longest) if n is None]} have no length bound")
    elif sum(longest) + len(longest) - 1 > VERSION_DESCRIPTION_LIMIT:
        out.append(f"{RELEASE_SETTINGS}: up to {sum(longest) + len(longest) - 1} characters, over a version "
                   f"description's {VERSION_DESCRIPTION_LIMIT}")
    versions = {((r.get("Properties") or {}).get("FunctionName") or {}).get("Ref"): n
                for n, r in (cfn.get("Resources") or {}).items() if r.get("Type") == "AWS::Lambda::Version"}
    for parameter in template.get("Parameters") or {}:
        change = change_of(cfn, parameter)
        stale = sorted(fn for fn, props in change.changed.items()
                       if fn in versions and props - UNVERSIONED and versions[fn] not in change.replaced)
        if stale and parameter not in REPUBLISH_PROCEDURES:
            out.append(f"parameter {parameter}: changes {stale} without publishing new versions (the alias keeps the old configuration)")
        if not stale and parameter in REPUBLISH_PROCEDURES:
            out.append(f"parameter {parameter}: listed in REPUBLISH_PROCEDURES but publishes by itself: remove it")
    return out


# 2. no parameter change replaces stored data by surprise ------------------------------------
STATEFUL_TYPES = frozenset({"AWS::OpenSearchService::Domain", "AWS::Cognito::UserPool", "AWS::Cognito::UserPoolDomain",
                            "AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::KMS::Key"})
# Of those, the ones that hold data: deleted by a parameter that toggles their condition, they must be kept.
DATA_TYPES = STATEFUL_TYPES - {"AWS::Cognito::UserPoolDomain"}
# (parameter, resource) replacements CloudFormation cannot be told to refuse (its rules see only new
# values), each with the section of docs/deploy.md that gives the procedure and why it is left.
PARAMETER_PROCEDURES: dict[tuple[str, str], str] = {
    ("AuthDomainPrefix", "UserPoolDomain"): "a pool has one prefix domain and CloudFormation creates the new one first",
}
PROCEDURES_HEADING = "### Parameter changes that need a procedure"


def replacement_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """For each parameter: the stateful resources a change of it would replace (createOnly
    properties of cfn-lint's resource schemas, over the translation) - none unless listed in
    PARAMETER_PROCEDURES - and the data-holding ones it would delete, which must be kept."""
    from infra.changes import change_of

    out: list[str] = []
    resources = cfn.get("Resources") or {}
    for parameter in template.get("Parameters") or {}:
        change = change_of(cfn, parameter)
        for name in sorted(change.replaced):
            if resources[name].get("Type") in STATEFUL_TYPES and (parameter, name) not in PARAMETER_PROCEDURES:
                out.append(f"parameter {parameter}: a change replaces {name} ({resources[name]['Type']}) "
                           f"through {sorted(change.changed.get(name, ()))}")
        for name in sorted(change.toggled):
            if resources[name].get("Type") in DATA_TYPES and resources[name].get("DeletionPolicy") not in KEPT:
                out.append(f"parameter {parameter}: a change deletes {name} with its data (DeletionPolicy "
                           f"{resources[name].get('DeletionPolicy')!r})")
    for parameter, name in PARAMETER_PROCEDURES:
        if name not in change_of(cfn, parameter).replaced:
            out.append(f"PARAMETER_PROCEDURES: {parameter} no longer replaces {name}: remove the entry")
    return out


# 3. cfn-lint, all regions, source and translation -------------------------------------------
def cfnlint_violations(source: Path, cfn: Mapping[str, Any], regions: str | list[str] = "ALL_REGIONS",
                       check_unused: bool = True) -> list[str]:
    """cfn-lint over template.yaml and its translation: every finding not in the explained
    exceptions of infra/cfnlint_scan.py, and every exception that no longer matches."""
    from infra import cfnlint_scan

    return cfnlint_scan.violations(cfnlint_scan.run(source, cfn, regions), check_unused=check_unused)


def snapstart_unsupported_regions() -> list[str]:
    """The regions cfn-lint knows where Lambda offers no SnapStart (its rule E2530's list)."""
    from cfnlint.helpers import REGIONS
    from cfnlint.rules.resources.lmbd.SnapStartSupported import SnapStartSupported

    return sorted(set(REGIONS) - set(SnapStartSupported().regions))


# 4. the operator's findings ------------------------------------------------------------------
USER_POOL = "UserPool"
# Common-rule-set rules that trip on the OAuth facade's legitimate requests -> the label each sets.
OAUTH_TRIPPED_RULES = {"GenericRFI_QUERYARGUMENTS": "awswaf:managed:aws:core-rule-set:GenericRFI_QueryArguments",
                       "NoUserAgent_HEADER": "awswaf:managed:aws:core-rule-set:NoUserAgent_Header"}
STATIC_FUNCTIONS = ("ConsoleFunction",)  # public, data-free: their role reaches only logs and traces
LOG_AND_TRACE_ACTIONS = frozenset({"logs:CreateLogStream", "logs:PutLogEvents", *STAR_RESOURCE_ACTIONS})
ALARM_METRIC_LIMIT = 10  # metrics one metric-math alarm may reference
ALARM_METRIC_HEADROOM = 3


def _walk(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        yield value
        for inner in value.values():
            yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner)


def waf_violations(template: Mapping[str, Any]) -> list[str]:
    """The common rules that trip on OAuth requests only count, and a later rule blocks their
    labels everywhere but on the OAuth facade's routes; the Authorization header is replaced in
    everything WAF records (sampled requests, logs, rate-limit details)."""
    out: list[str] = []
    for acl, props in _resources(template, "AWS::WAFv2::WebACL"):
        rules = props.get("Rules") or []
        common = next((r for r in rules if ((r.get("Statement") or {}).get("ManagedRuleGroupStatement") or {}).get("Name")
                       == "AWSManagedRulesCommonRuleSet"), None)
        counted = {o.get("Name") for o in ((common or {}).get("Statement", {}).get("ManagedRuleGroupStatement", {})
                                           .get("RuleActionOverrides") or []) if "Count" in (o.get("ActionToUse") or {})}
        facade = {path for _m, path in OAUTH_FACADE_ROUTES}
        for rule, label in OAUTH_TRIPPED_RULES.items():
            if rule not in counted:
                out.append(f"{acl}: {rule} blocks the OAuth facade's legitimate requests (override it to Count)")
                continue
            blockers = [r for r in rules if "Block" in (r.get("Action") or {}) and int(r.get("Priority", 0)) > int(common.get("Priority", 0))
                        and any(s.get("Key") == label for s in _walk(r.get("Statement")) if "Scope" in s)]
            if not blockers:
                out.append(f"{acl}: nothing blocks {label} outside the OAuth routes (counted everywhere)")
            for blocker in blockers:
                exempt = {m.get("SearchString") for n in _walk(blocker.get("Statement")) if "NotStatement" in n
                          for m in _walk(n["NotStatement"]) if m.get("PositionalConstraint") == "ENDS_WITH"}
                wrong = f"{acl}.{blocker.get('Name')}: exempts {sorted(exempt - facade)}, which are not OAuth facade routes"
                if not exempt <= facade and wrong not in out:
                    out.append(wrong)
        protections = ((props.get("DataProtectionConfig") or {}).get("DataProtections")) or []
        redacted = any((p.get("Field") or {}).get("FieldType") == "SINGLE_HEADER"
                       and "authorization" in [k.lower() for k in (p.get("Field") or {}).get("FieldKeys") or []]
                       and p.get("ExcludeRateBasedDetails") is not True and p.get("ExcludeRuleMatchDetails") is not True
                       for p in protections)
        sampled = any(v.get("SampledRequestsEnabled") is True for v in _walk(props) if "SampledRequestsEnabled" in v)
        if sampled and not redacted:
            out.append(f"{acl}: sampled requests show the Authorization header (DataProtectionConfig for it, or no sampling)")
    for name, props in _resources(template, "AWS::WAFv2::LoggingConfiguration"):
        names = [str(((f.get("SingleHeader") or {}).get("Name") or "")).lower() for f in props.get("RedactedFields") or []]
        if "authorization" not in names:
            out.append(f"{name}: WAF logs keep the Authorization header (RedactedFields)")
    return out


def operator_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """The logs role is the AWS-managed policy's; the user pool and the logs role are removed by
    a failed first deployment and kept otherwise; the OAuth table is kept on deletion and
    replacement; static functions reach nothing but logs; throttles of every route's function
    are alarmed with headroom under the metric-math limit; Cognito can send through SES; WAF
    as `waf_violations`."""
    out: list[str] = []
    resources = template.get("Resources") or {}
    role = resources.get(API_LOGS_ROLE) or {}
    if (role.get("Properties") or {}).get("ManagedPolicyArns") != [API_LOGS_POLICY] or (role.get("Properties") or {}).get("Policies"):
        out.append(f"{API_LOGS_ROLE}: not the AWS-managed AmazonAPIGatewayPushToCloudWatchLogs policy alone "
                   "(an inline policy cannot know the names of every API's log groups)")
    for name in (USER_POOL, API_LOGS_ROLE):
        if (resources.get(name) or {}).get("DeletionPolicy") != "RetainExceptOnCreate":
            out.append(f"{name}: DeletionPolicy {(resources.get(name) or {}).get('DeletionPolicy')!r} "
                       "(RetainExceptOnCreate: a failed first deployment must not leave it behind)")
    protection = _props(template, USER_POOL).get("DeletionProtection")
    first = _param(template, protection["Ref"]).get("Default") if isinstance(protection, dict) and "Ref" in protection else protection
    if first == "ACTIVE":
        out.append(f"{USER_POOL}: created with deletion protection ACTIVE (a failed first deployment cannot delete it)")
    table = resources.get(OAUTH_TABLE) or {}
    if table.get("DeletionPolicy") not in KEPT or table.get("UpdateReplacePolicy") != "Retain":
        out.append(f"{OAUTH_TABLE}: DeletionPolicy {table.get('DeletionPolicy')!r} / UpdateReplacePolicy "
                   f"{table.get('UpdateReplacePolicy')!r} (registrations and refresh bindings must survive)")
    for fn in STATIC_FUNCTIONS:
        (role_name,) = _refs(_props(template, fn).get("Role")) or {"?"}
        actions = {a for policy in _as_list(_props(template, role_name).get("Policies"))
                   for st in _as_list((policy.get("PolicyDocument") or {}).get("Statement")) for a in _as_list(st.get("Action"))}
        if role_name in STORE_VERBS or not actions <= LOG_AND_TRACE_ACTIONS:
            out.append(f"{fn}: serves static files to anyone on {role_name}, which may {sorted(actions - LOG_AND_TRACE_ACTIONS) or 'reach the store'}")
    alarmed: set[str] = set()
    for name, props in _alarms(template).items():
        metrics = [m for m in props.get("Metrics") or [] if m.get("MetricStat")]
        if len(metrics) > ALARM_METRIC_LIMIT - ALARM_METRIC_HEADROOM:
            out.append(f"{name}: {len(metrics)} metrics of the {ALARM_METRIC_LIMIT} a metric-math alarm may reference "
                       f"(keep {ALARM_METRIC_HEADROOM} free)")
        for metric, dims in _alarm_metrics(props):
            if metric == "Throttles":
                alarmed |= {r for d in dims for r in _refs(d.get("Value"))}
    routed = {fn for fn, *_ in api_events(template)}
    for fn in sorted(routed - alarmed):
        out.append(f"{fn}: serves routes but no alarm watches its Throttles")
    email = _props(template, USER_POOL).get("EmailConfiguration")
    ses = [b for b in _branches(email) if isinstance(b, dict) and b.get("EmailSendingAccount") == "DEVELOPER" and b.get("SourceArn")]
    if not ses:
        out.append(f"{USER_POOL}: no optional SES sender (Cognito's own sender has a small daily quota)")
    return out + waf_violations(template)


# 5. the deploy guide as the template behaves --------------------------------------------------
def public_routes(template: Mapping[str, Any]) -> list[tuple[str, str]]:
    return sorted({(method, path) for _fn, _e, method, path, auth in api_events(template) if auth.get("Authorizer") == "NONE"})


def left_by_failed_create(cfn: Mapping[str, Any]) -> list[str]:
    """Resources a failed first deployment leaves behind: plain Retain (RetainExceptOnCreate
    and Delete go with the failed stack)."""
    return sorted(n for n, r in (cfn.get("Resources") or {}).items() if r.get("DeletionPolicy") in ("Retain", "Snapshot"))


def snapstart_memory_gb(template: Mapping[str, Any]) -> float:
    """Memory of the functions with SnapStart on, in GB: what the snapshot cache is billed on."""
    total = 0
    for _name, raw in _resources(template, "AWS::Serverless::Function"):
        props = _function_props(template, raw)
        if (props.get("SnapStart") or {}).get("ApplyOn") in ("PublishedVersions", SNAPSTART_SWITCH):
            total += int(props.get("MemorySize", 128))
    return total / 1024


def guide_violations(template: Mapping[str, Any], cfn: Mapping[str, Any], guide: str) -> list[str]:
    """docs/deploy.md states the public routes (their number and each one), that a failed
    first deployment leaves nothing (or names what it leaves), engine upgrades, the procedure
    of every change PARAMETER_PROCEDURES and REPUBLISH_PROCEDURES list, the regions without
    SnapStart, and SnapStart's cache and restore charges on the template's memory."""
    out: list[str] = []
    routes = public_routes(template)
    stated = re.findall(r"(\d+) public routes", guide)
    if stated != [str(len(routes))] * len(stated) or not stated:
        out.append(f"docs/deploy.md: states {stated or 'no'} public routes; the template has {len(routes)}")
    for method, path in routes:
        if f"`{method} {path}`" not in guide:
            out.append(f"docs/deploy.md: public route `{method} {path}` is not listed")
    left = left_by_failed_create(cfn)
    if not left and "A failed first deployment leaves nothing behind" not in guide:
        out.append("docs/deploy.md: does not say a failed first deployment leaves nothing behind")
    for name in left:
        if name not in guide:
            out.append(f"docs/deploy.md: does not say a failed first deployment leaves {name}")
    if "### Engine upgrades" not in guide or "EnableVersionUpgrade" not in guide:
        out.append("docs/deploy.md: no \"### Engine upgrades\" section naming EnableVersionUpgrade")
    section = re.split(r"\n##+ ", guide.split(PROCEDURES_HEADING, 1)[1], maxsplit=1)[0] if PROCEDURES_HEADING in guide else ""
    if not section:
        out.append(f"docs/deploy.md: no {PROCEDURES_HEADING!r} section")
    for parameter in sorted({p for p, _r in PARAMETER_PROCEDURES} | set(REPUBLISH_PROCEDURES)):
        if section and f"`{parameter}`" not in section:
            out.append(f"docs/deploy.md: {PROCEDURES_HEADING!r} gives no procedure for `{parameter}`")
    for region in snapstart_unsupported_regions():
        if f"`{region}`" not in guide:
            out.append(f"docs/deploy.md: does not name `{region}` among the regions without SnapStart")
    gb = snapstart_memory_gb(template)
    if "SnapStart cache" not in guide or f"{gb:.1f} GB" not in guide or "SnapStart restore" not in guide:
        out.append(f"docs/deploy.md: the cost lacks SnapStart cache (on {gb:.1f} GB of function memory) or restore charges")
    return out


def deployment_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """Points 1-7 of issue 14 (point 8, `checkov_violations`, runs a separate tool)."""
    return (alarm_violations(template) + store_violations(template) + throttle_violations(template)
            + store_access_violations(template) + login_violations(template)
            + lifecycle_violations(template, cfn) + small_item_violations(template))


GUIDE = Path(__file__).resolve().parents[1] / "docs" / "deploy.md"


def second_deploy_violations(template: Mapping[str, Any], cfn: Mapping[str, Any]) -> list[str]:
    """Points 1, 2, 4 and 5 of issue 38 (point 3, `cfnlint_violations`, runs a separate tool)."""
    return (release_violations(template, cfn) + replacement_violations(template, cfn)
            + operator_violations(template, cfn) + guide_violations(template, cfn, GUIDE.read_text()))


# ---------------------------------------------------------------------------------------
def all_violations(template: Mapping[str, Any], parameters: Mapping[str, str] | None = None) -> list[str]:
    cfn = translate(template, parameters)
    return (
        route_violations(template)
        + function_violations(template)
        + parameter_violations(template)
        + translated_route_violations(cfn)
        + iam_violations(cfn)
        + deployment_violations(template, cfn)
        + oauth_facade_violations(template)
        + snapstart_violations(template, cfn)
        + second_deploy_violations(template, cfn)
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m infra.template_rules [template.yaml] [--checkov] [--cfn-lint]`."""
    args = list(argv if argv is not None else sys.argv[1:])
    with_checkov, with_cfnlint = "--checkov" in args, "--cfn-lint" in args
    args = [a for a in args if a not in ("--checkov", "--cfn-lint")]
    path = Path(args[0] if args else "template.yaml")
    template = load(path)
    problems = all_violations(template)
    if with_checkov:
        problems += checkov_violations(template, translate(template))
    if with_cfnlint:
        problems += cfnlint_violations(path, translate(template))
    for problem in problems:
        print(problem)
    print(f"{path}: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
