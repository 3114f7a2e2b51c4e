"""Each rule of infra/template_rules.py holds on template.yaml AND fails on a template
that breaks it (a copy of the real one with one thing changed)."""

from __future__ import annotations

import pytest

from infra import template_rules as rules


def test_template_yaml_keeps_every_rule(source, cfn):
    assert rules.route_violations(source) == []
    assert rules.function_violations(source) == []
    assert rules.parameter_violations(source) == []
    assert rules.translated_route_violations(cfn) == []
    assert rules.iam_violations(cfn) == []


# -- routes --------------------------------------------------------------------------------
def event_auth(template, function, event):
    return template["Resources"][function]["Properties"]["Events"][event]["Properties"]["Auth"]


def test_a_route_without_the_authorizer_fails(template):
    del event_auth(template, "RecallFunction", "Recall")["Authorizer"]
    assert any("RecallFunction.Recall" in v for v in rules.route_violations(template))


def test_a_route_without_scopes_fails_in_source_and_in_the_generated_api(template):
    auth = event_auth(template, "ForgetFunction", "DeleteOne")
    del auth["AuthorizationScopes"]
    assert any("no AuthorizationScopes" in v for v in rules.route_violations(template))
    generated = rules.translated_route_violations(rules.translate(template))
    assert generated == ["XMemoApi: DELETE /v1/memories/{reference} requires no scope"]


def test_a_public_route_outside_the_allow_list_fails_in_the_generated_api(template):
    event_auth(template, "MemoriesFunction", "List").clear()
    event_auth(template, "MemoriesFunction", "List")["Authorizer"] = "NONE"
    assert any("MemoriesFunction.List" in v for v in rules.route_violations(template))
    generated = rules.translated_route_violations(rules.translate(template))
    assert generated == ["XMemoApi: GET /v1/memories is not behind CognitoAuthorizer"]


def test_a_hard_coded_or_unknown_scope_fails(template):
    event_auth(template, "RememberFunction", "Remember")["AuthorizationScopes"] = ["xmemo/memory:write"]
    event_auth(template, "RecallFunction", "Recall")["AuthorizationScopes"] = [{"Fn::Sub": "${ResourceServerId}/memory:admin"}]
    found = rules.route_violations(template)
    assert len(found) == 2 and all("is not ${ResourceServerId}" in v for v in found)


def test_the_metadata_routes_may_be_public_but_must_say_so(template):
    events = template["Resources"]["McpFunction"]["Properties"]["Events"]
    assert events["MetadataPublic"]["Properties"]["Path"] == "/.well-known/oauth-protected-resource/mcp"
    assert rules.route_violations(template) == []
    assert rules.translated_route_violations(rules.translate(template)) == []
    del events["MetadataPublic"]["Properties"]["Auth"]
    assert any("must say Authorizer: NONE" in v for v in rules.route_violations(template))


def test_an_api_without_the_cognito_authorizer_fails(template):
    del template["Resources"]["XMemoApi"]["Properties"]["Auth"]["Authorizers"]["CognitoAuthorizer"]["UserPoolArn"]
    assert any("no Cognito user-pool authorizer" in v for v in rules.route_violations(template))


# -- functions -----------------------------------------------------------------------------
def test_a_function_without_the_layer_fails(template):
    layers = template["Globals"]["Function"].pop("Layers")
    for name, resource in template["Resources"].items():
        if resource["Type"] == "AWS::Serverless::Function" and name != "PurgeFunction":
            resource["Properties"]["Layers"] = layers
    assert rules.function_violations(template) == ["PurgeFunction: does not use the shared layer XMemoLayer"]


def test_globals_merge_like_sam():
    assert rules.merge_globals({"Layers": [1], "Env": {"A": 1}, "T": 3}, {"Layers": [2], "Env": {"B": 2}, "T": 5}) == {
        "Layers": [1, 2], "Env": {"A": 1, "B": 2}, "T": 5}


@pytest.mark.parametrize("change, message", [
    ({"Runtime": "python3.9"}, "runtime"),
    ({"Architectures": ["x86_64"]}, "not arm64"),
    ({"Tracing": "PassThrough"}, "tracing"),
])
def test_runtime_architecture_and_tracing_are_enforced(template, change, message):
    template["Resources"]["RecallFunction"]["Properties"].update(change)
    assert any(message in v and v.startswith("RecallFunction") for v in rules.function_violations(template))


def test_api_functions_start_from_snapstart_through_their_alias(template):
    assert rules.snapstart_violations(template, rules.translate(template)) == []
    del template["Globals"]["Function"]["AutoPublishAlias"]
    del template["Globals"]["Function"]["VersionDeletionPolicy"]  # SAM refuses it without an alias
    template["Resources"]["RecallFunction"]["Properties"]["SnapStart"] = {"ApplyOn": "None"}
    problems = rules.snapstart_violations(template, rules.translate(template))
    assert "RecallFunction: serves API routes without SnapStart on its published versions" in problems
    assert "RememberFunction: serves API routes without AutoPublishAlias (SnapStart needs a published version)" in problems
    assert any(p.endswith("POST /v1/recall invokes a function's $LATEST, not its alias") for p in problems)
    assert not any(p.startswith(("PurgeFunction", "IndexInitFunction")) for p in problems)  # no routes: no rule


def test_a_sam_generated_role_fails_twice(template):
    """`Policies` on a function: the source rule flags it, and the role SAM generates
    carries a managed policy, which the IAM rule flags in the translation."""
    props = template["Resources"]["RecallFunction"]["Properties"]
    del props["Role"]
    props["Policies"] = ["AWSLambdaExecute"]
    assert {v.split(":")[0] for v in rules.function_violations(template)} == {"RecallFunction"}
    assert any("RecallFunctionRole: managed policies" in v for v in rules.iam_violations(rules.translate(template)))


# -- IAM -----------------------------------------------------------------------------------
def api_role_statements(template):
    policies = template["Resources"]["ApiFunctionRole"]["Properties"]["Policies"]
    return next(p for p in policies if isinstance(p, dict) and p.get("PolicyName") == "logs-and-traces")["PolicyDocument"]["Statement"]


@pytest.mark.parametrize("statement, message", [
    ({"Effect": "Allow", "Action": "es:*", "Resource": "arn:aws:es:us-east-1:1:domain/x/*"}, "wildcard action 'es:*'"),
    ({"Effect": "Allow", "Action": ["es:ESHttp*"], "Resource": "arn:aws:es:us-east-1:1:domain/x/*"}, "wildcard action 'es:ESHttp*'"),
    ({"Effect": "Allow", "Action": "*", "Resource": "*"}, "wildcard action '*'"),
    ({"Effect": "Allow", "Action": "es:ESHttpGet", "Resource": "*"}, "Resource \"*\" for ['es:ESHttpGet']"),
    ({"Effect": "Allow", "Action": ["xray:PutTraceSegments", "logs:PutLogEvents"], "Resource": "*"}, "['logs:PutLogEvents']"),
    ({"Effect": "Allow", "NotAction": "iam:*", "Resource": "arn:aws:s3:::b"}, "NotAction"),
    ({"Effect": "Allow", "Action": "bedrock:InvokeModel",
      "Resource": {"Fn::If": ["UseBedrock", "arn:aws:bedrock:us-east-1::foundation-model/m", "*"]}}, "Resource \"*\""),
])
def test_wide_statements_fail(template, statement, message):
    api_role_statements(template).append(statement)
    found = rules.iam_violations(rules.translate(template))
    assert len(found) >= 1 and any(message in v and v.startswith("ApiFunctionRole/logs-and-traces") for v in found), found


def test_the_star_resource_allow_list_is_explicit_and_explained():
    assert set(rules.STAR_RESOURCE_ACTIONS) == {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}
    assert all(reason for reason in rules.STAR_RESOURCE_ACTIONS.values())


def test_a_deny_is_never_too_wide():
    assert rules.statement_violations("x", {"Effect": "Deny", "Action": "*", "Resource": "*"}) == []


def test_a_wildcard_principal_in_the_domain_access_policy_fails(template):
    statement = template["Resources"]["OpenSearchDomain"]["Properties"]["AccessPolicies"]["Statement"][0]
    statement["Principal"] = {"AWS": "*"}
    assert rules.iam_violations(rules.translate(template)) == ["OpenSearchDomain (access policy): wildcard principal"]


def test_a_lambda_permission_open_to_anyone_fails(template):
    permission = template["Resources"]["PreTokenInvokePermission"]["Properties"]
    permission["Principal"] = "*"
    del permission["SourceArn"]
    found = rules.iam_violations(rules.translate(template))
    assert len(found) == 2 and all(v.startswith("PreTokenInvokePermission") for v in found)


# -- parameters ----------------------------------------------------------------------------
def test_a_parameter_without_description_fails(template):
    template["Parameters"]["StageName"]["Description"] = " "
    template["Parameters"]["ClientSecret"] = {"Type": "String", "Description": "a secret"}
    assert rules.parameter_violations(template) == [
        "parameter StageName: no Description",
        "parameter ClientSecret: looks like a secret but is not NoEcho",
    ]


def test_the_command_line_reports_and_fails(template, tmp_path, capsys):
    import json

    template["Parameters"]["StageName"]["Description"] = ""
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))
    assert rules.main([str(path)]) == 1
    assert "parameter StageName: no Description" in capsys.readouterr().out
    assert rules.main([str(rules.Path(__file__).resolve().parents[2] / "template.yaml")]) == 0


# -- the MCP authorization server (issue 15) -----------------------------------------------
def test_the_authorization_server_keeps_its_rule(source):
    from xmemo.oauth.dynamo import TTL_ATTRIBUTE
    from xmemo.oauth.facade import PATHS

    assert rules.oauth_facade_violations(source) == []
    assert rules.OAUTH_TTL_ATTRIBUTE == TTL_ATTRIBUTE  # the attribute the adapter writes is the one that expires
    assert {path for _, path in rules.OAUTH_FACADE_ROUTES} == set(PATHS)  # every path the façade answers is deployed


def test_an_authorization_server_route_missing_or_served_elsewhere_fails(template):
    events = template["Resources"]["OAuthFunction"]["Properties"]["Events"]
    moved = events.pop("Token")
    template["Resources"]["MemoriesFunction"]["Properties"]["Events"]["Token"] = moved
    assert rules.oauth_facade_violations(template) == [
        "POST /oauth2/token: must be served by OAuthFunction alone (got ['MemoriesFunction'])"]
    del template["Resources"]["MemoriesFunction"]["Properties"]["Events"]["Token"]
    assert "POST /oauth2/token: must be served by OAuthFunction alone (got None)" in rules.oauth_facade_violations(template)


def test_an_extra_public_route_on_the_authorization_server_fails(template):
    events = template["Resources"]["OAuthFunction"]["Properties"]["Events"]
    events["Admin"] = {"Type": "Api", "Properties": {"RestApiId": {"Ref": "XMemoApi"}, "Path": "/oauth2/admin",
                                                      "Method": "GET", "Auth": {"Authorizer": "NONE"}}}
    assert "OAuthFunction: GET /oauth2/admin is not an authorization-server route" in rules.oauth_facade_violations(template)
    assert any("OAuthFunction.Admin" in v for v in rules.route_violations(template))  # and it is not public either


def test_the_authorization_server_table_must_expire_items(template):
    template["Resources"]["OAuthStateTable"]["Properties"]["TimeToLiveSpecification"]["Enabled"] = False
    assert rules.oauth_facade_violations(template) == [
        "OAuthStateTable: a DynamoDB table with TTL enabled on expires_at is required"]


def test_the_authorization_server_role_reaches_only_its_table(template):
    statement = template["Resources"]["OAuthFunctionRole"]["Properties"]["Policies"][0]["PolicyDocument"]["Statement"][0]
    statement["Action"].append("dynamodb:Scan")
    assert rules.oauth_facade_violations(template) == [
        "OAuthFunctionRole: DynamoDB access must be ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', "
        "'dynamodb:UpdateItem'] on OAuthStateTable only"]
    statement["Action"].remove("dynamodb:Scan")
    statement["Resource"] = {"Fn::GetAtt": ["UserPool", "Arn"]}
    assert len(rules.oauth_facade_violations(template)) == 1
    statement["Resource"] = {"Fn::GetAtt": ["OAuthStateTable", "Arn"]}
    template["Resources"]["OAuthFunctionRole"]["Properties"]["Policies"].append(
        {"PolicyName": "more", "PolicyDocument": {"Statement": [{"Effect": "Allow", "Action": "ssm:GetParameter", "Resource": "x"}]}})
    assert rules.oauth_facade_violations(template) == [
        "OAuthFunctionRole: ['ssm:GetParameter'] is more than the authorization server needs"]


def test_the_resource_metadata_names_the_authorization_server(source):
    issuer = source["Resources"]["McpFunction"]["Properties"]["Environment"]["Variables"]["XMEMO_OAUTH_ISSUER"]
    assert issuer["Fn::If"][:2] == ["HasPublicBaseUrl", {"Ref": "PublicBaseUrl"}]
    env = source["Resources"]["OAuthFunction"]["Properties"]["Environment"]["Variables"]
    assert env["XMEMO_PUBLIC_BASE_URL"] == {"Fn::If": ["HasPublicBaseUrl", {"Ref": "PublicBaseUrl"}, {"Ref": "AWS::NoValue"}]}
    assert env["XMEMO_OAUTH_TABLE"] == {"Ref": "OAuthStateTable"}
