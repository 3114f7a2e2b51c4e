"""Issue 14, points 1-7: each deployment rule of infra/template_rules.py holds on
template.yaml and names the breakage on a copy of it broken in exactly that one place."""

from __future__ import annotations

import pytest

from infra import template_rules as rules

R = "Resources"


def props(template, name):
    return template[R][name]["Properties"]


def domain_statements(template):
    return props(template, "OpenSearchDomain")["AccessPolicies"]["Statement"]


def test_template_yaml_keeps_every_deployment_rule(source, cfn):
    assert rules.deployment_violations(source, cfn) == []


def test_every_variant_keeps_the_deployment_rules(source):
    for parameters in ({"Profile": "production"}, {"Profile": "production", "ConfigureApiGatewayLogsRole": "true"},
                       {"ExistingOpenSearchEndpoint": "https://search-x.eu-west-1.es.amazonaws.com"}):
        assert rules.deployment_violations(source, rules.translate(source, parameters)) == [], parameters


# 1. alarms that can notify ------------------------------------------------------------------
def test_the_aws_managed_sns_key_fails(template):
    props(template, "AlarmTopic")["KmsMasterKeyId"] = "alias/aws/sns"
    assert rules.alarm_violations(template) == [
        "AlarmTopic: KmsMasterKeyId 'alias/aws/sns' - CloudWatch cannot use an AWS-managed or outside key"]


def test_a_key_that_does_not_admit_cloudwatch_fails(template):
    statements = props(template, "AlarmKey")["KeyPolicy"]["Statement"]
    statements[:] = [s for s in statements if s.get("Principal", {}).get("Service") != "cloudwatch.amazonaws.com"]
    assert rules.alarm_violations(template) == [
        "AlarmTopic: key AlarmKey does not let cloudwatch.amazonaws.com Decrypt and GenerateDataKey"]


@pytest.mark.parametrize("alarm, message", [
    ("StoreJvmPressureAlarm", "no alarm on the store's JVMMemoryPressure"),
    ("StoreCpuAlarm", "no alarm on the store's CPUUtilization"),
    ("StoreCpuCreditAlarm", "no alarm on the store's CPUCreditBalance"),
    ("StoreSnapshotFailureAlarm", "no alarm on the store's AutomatedSnapshotFailure"),
    ("PreTokenErrorsAlarm", "no alarm on the pre-token trigger's Errors (no token is issued while it fails)"),
    ("ApiLatencyP99Alarm", "no alarm on the API's p99 Latency"),
])
def test_each_missing_alarm_is_named(template, alarm, message):
    del template[R][alarm]
    assert rules.alarm_violations(template) == [message]


def test_an_alarm_that_notifies_nobody_fails(template):
    props(template, "StoreCpuAlarm")["AlarmActions"] = []
    assert rules.alarm_violations(template) == ["StoreCpuAlarm: does not notify AlarmTopic"]


# 2. a store that survives a node ------------------------------------------------------------
def test_production_is_three_azs_three_masters_graviton_and_replicated(source):
    cluster = rules.resolve(props(source, "OpenSearchDomain")["ClusterConfig"], rules._profile_truth(source, "production"))
    assert cluster["ZoneAwarenessConfig"] == {"AvailabilityZoneCount": 3} and cluster["DedicatedMasterCount"] == 3
    assert cluster["InstanceCount"] == {"Ref": "ProductionDataNodes"}
    dev = rules.resolve(props(source, "OpenSearchDomain")["ClusterConfig"], rules._profile_truth(source, "dev"))
    assert dev["InstanceCount"] == 1 and dev["InstanceType"] == "t3.small.search" and dev["ZoneAwarenessEnabled"] is False
    assert "DedicatedMasterType" not in dev


@pytest.mark.parametrize("breakage, message", [
    (lambda t: t["Parameters"]["ProductionDataNodes"].update(AllowedValues=[3, 4]),
     "OpenSearchDomain: production offers 4 data nodes, which 3 AZs cannot place evenly"),
    (lambda t: t["Parameters"]["ProductionInstanceType"]["AllowedValues"].append("m5.large.search"),
     "OpenSearchDomain: production data-node type m5.large.search is not a current Graviton family"),
    (lambda t: props(t, "OpenSearchDomain")["ClusterConfig"].update(ZoneAwarenessConfig={"AvailabilityZoneCount": 2}),
     "OpenSearchDomain: production is not zone-aware across 3 AZs"),
    (lambda t: props(t, "OpenSearchDomain")["ClusterConfig"].update(DedicatedMasterCount=2),
     "OpenSearchDomain: production has no three dedicated masters"),
    (lambda t: t["Mappings"]["Profiles"]["production"].update(Replicas="0"), "Mappings.Profiles.production: no replica"),
    (lambda t: props(t, "OpenSearchIndex").pop("Replicas"),
     "OpenSearchIndex: Replicas does not follow the profile (the live index keeps its creation-time replicas)"),
    (lambda t: props(t, "OpenSearchIndex").pop("SnapshotRepository"),
     "OpenSearchIndex: registers no S3 snapshot repository xmemo-s3 (name, bucket, role)"),
    (lambda t: t[R]["SnapshotBucket"].update(DeletionPolicy="Delete"), "SnapshotBucket: snapshots must outlive the stack (DeletionPolicy)"),
    (lambda t: props(t, "SnapshotRole")["AssumeRolePolicyDocument"]["Statement"][0].update(Principal={"Service": "lambda.amazonaws.com"}),
     "OpenSearchIndex: snapshot role SnapshotRole is not assumable by es.amazonaws.com"),
])
def test_a_store_that_cannot_survive_a_node_fails(template, breakage, message):
    breakage(template)
    assert rules.store_violations(template) == [message]


# 3. throttling per caller, and a web ACL ----------------------------------------------------
def waf_rule(template, name):
    return next(r for r in props(template, "WebAcl")["Rules"] if r["Name"] == name)


def test_without_the_association_the_web_acl_protects_nothing(template):
    del template[R]["WebAclAssociation"]
    assert rules.throttle_violations(template) == ["no regional WAF web ACL is associated with the XMemoApi stage"]


@pytest.mark.parametrize("breakage, message", [
    (lambda t: waf_rule(t, "rate-per-token")["Statement"]["RateBasedStatement"]["CustomKeys"][0]["Header"].update(Name="user-agent"),
     "web ACL: no blocking rate-based rule keyed on the Authorization header alone"),
    (lambda t: waf_rule(t, "rate-per-ip").update(Action={"Count": {}}), "web ACL: no blocking rate-based rule per IP"),
    (lambda t: props(t, "WebAcl")["Rules"].remove(waf_rule(t, "aws-common")),
     "web ACL: no AWS managed common rule set (AWSManagedRulesCommonRuleSet)"),
])
def test_each_missing_waf_rule_is_named(template, breakage, message):
    breakage(template)
    assert rules.throttle_violations(template) == [message]


def test_throttle_words_must_match_the_per_method_settings(template):
    template["Parameters"]["ThrottleRateLimit"]["Description"] = "Requests per second of the stage (all routes together)."
    assert rules.throttle_violations(template) == [
        "parameter ThrottleRateLimit: `/*` `*` gives each route and method its own bucket; the description must say so (\"each route\")"]


# 4. the store readable only by the functions that need it -----------------------------------
def statement_of(template, sid):
    return next(s for s in domain_statements(template) if isinstance(s, dict) and s.get("Sid") == sid)


@pytest.mark.parametrize("breakage, message", [
    (lambda t: statement_of(t, "Purge")["Action"].append("es:ESHttpDelete"),
     "OpenSearchDomain: PurgeRole may use ['es:ESHttpDelete', 'es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost']; "
     "only ['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost']"),
    (lambda t: statement_of(t, "IndexInit")["Action"].append("es:ESHttpDelete"),
     "OpenSearchDomain: IndexInitRole may use ['es:ESHttpDelete', 'es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost', 'es:ESHttpPut']; "
     "only ['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost', 'es:ESHttpPut']"),
    (lambda t: statement_of(t, "Purge").update(Resource=[{"Fn::Sub": "arn:${AWS::Partition}:es:${AWS::Region}:${AWS::AccountId}:domain/xmemo-${Id}/*"}]),
     "OpenSearchDomain: PurgeRole may reach every path of the domain ('arn:${AWS::Partition}:es:${AWS::Region}:${AWS::AccountId}:domain/xmemo-${Id}/*')"),
    (lambda t: domain_statements(t).remove(statement_of(t, "DenyEveryoneElse")),
     "OpenSearchDomain: no Deny of es:ESHttp* for every principal but the store roles (aws:PrincipalArn)"),
    (lambda t: props(t, "OpenSearchDomain")["LogPublishingOptions"].pop("SEARCH_SLOW_LOGS"),
     "OpenSearchDomain: SEARCH_SLOW_LOGS are not published to CloudWatch Logs"),
])
def test_a_store_readable_beyond_its_functions_fails(template, breakage, message):
    breakage(template)
    assert rules.store_access_violations(template) == [message]


def test_one_statement_for_all_roles_fails(template):
    """The state before issue 14: one statement naming the three roles with every verb."""
    statements = domain_statements(template)
    merged = {"Effect": "Allow", "Principal": {"AWS": [{"Fn::GetAtt": [r, "Arn"]} for r in rules.STORE_VERBS]},
              "Action": ["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"],
              "Resource": {"Fn::Sub": "arn:${AWS::Partition}:es:${AWS::Region}:${AWS::AccountId}:domain/x/*"}}
    statements[:] = [merged] + [s for s in statements if isinstance(s, dict) and s.get("Effect") == "Deny"]
    found = rules.store_access_violations(template)
    assert {f"OpenSearchDomain: {r} needs exactly one statement of its own (found 0)" for r in rules.STORE_VERBS} <= set(found)


def test_the_deny_admits_the_break_glass_role_only_when_set(source):
    truth = {**rules._profile_truth(source, "dev"), "HasStoreAdmin": True}
    deny = next(s for s in rules.resolve(domain_statements(source), truth) if s["Effect"] == "Deny")
    assert {"Ref": "StoreAdminRoleArn"} in deny["Condition"]["StringNotEquals"]["aws:PrincipalArn"]
    truth["HasStoreAdmin"] = False
    deny = next(s for s in rules.resolve(domain_statements(source), truth) if s["Effect"] == "Deny")
    assert len(deny["Condition"]["StringNotEquals"]["aws:PrincipalArn"]) == 3


def test_the_policy_paths_name_the_alias_the_functions_use(source):
    from xmemo.config import Settings

    alias = Settings.model_fields["opensearch_alias"].default
    text = str(statement_of(source, "RequestHandlers")["Resource"])
    assert f"/{alias}*" in text


# 5. interactive login that loads ------------------------------------------------------------
def test_managed_login_v2_without_branding_fails(template):
    del template[R]["InteractiveClientBranding"]
    assert rules.login_violations(template) == [
        "InteractiveClient: managed login v2 without an AWS::Cognito::ManagedLoginBranding (error page)"]


def test_optional_mfa_fails(template):
    props(template, "UserPool")["MfaConfiguration"] = "OPTIONAL"
    assert rules.login_violations(template) == ["UserPool: MfaConfiguration is 'OPTIONAL', not ON"]


def test_tokens_longer_than_an_hour_by_default_fail(template):
    template["Parameters"]["AccessTokenMinutes"]["Default"] = 120
    found = rules.login_violations(template)
    assert found == [f"{c}: access tokens default to [120] minutes (at most 60 minutes)" for c in ("AgentClient", "InteractiveClient")]


# 6. safe to create, fail and create again ---------------------------------------------------
def test_a_fixed_retained_domain_fails(template, cfn):
    template[R]["OpenSearchDomain"]["DeletionPolicy"] = "Retain"
    props(template, "OpenSearchDomain")["DomainName"] = {"Ref": "OpenSearchDomainName"}
    assert rules.lifecycle_violations(template, cfn) == [
        "OpenSearchDomain: DeletionPolicy 'Retain' (RetainExceptOnCreate: a failed create must not block the retry)",
        "OpenSearchDomain: DomainName is not derived from AWS::StackId (a retained domain blocks the next stack)"]


def test_the_account_logs_role_must_be_opt_in(template, cfn):
    template["Parameters"]["ConfigureApiGatewayLogsRole"]["Default"] = "true"
    assert rules.lifecycle_violations(template, cfn) == [
        "parameter ConfigureApiGatewayLogsRole: must default to \"false\" (it replaces an account-wide role)"]


def test_a_stage_that_does_not_wait_for_the_logs_role_fails(template):
    del props(template, "XMemoApi")["Variables"]
    found = rules.lifecycle_violations(template, rules.translate(template))
    assert len(found) == 1 and "does not wait for ApiGatewayAccount" in found[0]


def test_a_custom_resource_without_service_timeout_fails(template):
    del props(template, "OpenSearchIndex")["ServiceTimeout"]
    assert rules.lifecycle_violations(template, rules.translate(template)) == [
        "OpenSearchIndex: no ServiceTimeout (CloudFormation waits 3600 s for a lost answer)"]
    props(template, "OpenSearchIndex")["ServiceTimeout"] = 300
    assert rules.lifecycle_violations(template, rules.translate(template)) == [
        "OpenSearchIndex: ServiceTimeout 300 s does not cover IndexInitFunction's 900 s"]


def test_log_groups_need_retention_a_keep_policy_and_no_fixed_name(template, cfn):
    group = template[R]["FunctionLogGroup"]
    del group["Properties"]["RetentionInDays"]
    del group["DeletionPolicy"]
    group["Properties"]["LogGroupName"] = "/aws/lambda/xmemo"
    assert rules.lifecycle_violations(template, cfn) == [
        "FunctionLogGroup: no RetentionInDays (logs kept forever)",
        "FunctionLogGroup: deleted with the stack (DeletionPolicy None)",
        "FunctionLogGroup: a fixed LogGroupName blocks a stack created again under the same name"]


# 7. smaller items ---------------------------------------------------------------------------
def test_a_quoted_message_string_renders_invalid_json(template):
    responses = props(template, "XMemoApi")["GatewayResponses"]
    responses["DEFAULT_4XX"]["ResponseTemplates"]["application/json"] = (
        '{"error": {"code": "invalid_request", "message": "$context.error.messageString"}}')
    found = rules.small_item_violations(template)
    assert len(found) == 1 and found[0].startswith("XMemoApi.DEFAULT_4XX (application/json): renders invalid JSON")


def test_the_rendered_4xx_body_carries_the_message(source):
    body = props(source, "XMemoApi")["GatewayResponses"]["DEFAULT_4XX"]["ResponseTemplates"]["application/json"]
    import json

    assert json.loads(rules.render_gateway_body(body))["error"]["message"] == 'a "quoted" message'


def test_a_pre_token_trigger_under_globals_fails_several_ways(template):
    """Back to a SAM function: Globals give it the layer and the store endpoint."""
    trigger = template[R]["PreTokenFunction"]
    trigger["Type"] = "AWS::Serverless::Function"
    trigger["Properties"] = {"CodeUri": "functions/pre_token/", "Role": {"Fn::GetAtt": ["PreTokenRole", "Arn"]}}
    assert rules.small_item_violations(template) == [
        "PreTokenFunction: carries a layer (every token request pays its cold start)",
        "PreTokenFunction: references the store (the user pool would wait for the domain)",
        "PreTokenFunction: no ReservedConcurrentExecutions"]
    assert rules.function_violations(template) == [
        "PreTokenFunction: must be a plain AWS::Lambda::Function (Globals would add the layer)"]


def test_a_purge_without_dead_letters_fails(template):
    del props(template, "PurgeFunction")["DeadLetterQueue"]
    assert rules.small_item_violations(template) == ["PurgeFunction: asynchronous invocations without a dead-letter target"]


def test_an_old_engine_default_fails(template):
    template["Parameters"]["OpenSearchEngineVersion"]["Default"] = "OpenSearch_2.17"
    assert rules.small_item_violations(template) == [
        "parameter OpenSearchEngineVersion: default 'OpenSearch_2.17' is older than OpenSearch_3.3"]


def test_resolve_decides_conditions_and_drops_novalue():
    value = {"a": {"Fn::If": ["C", 1, {"Ref": "AWS::NoValue"}]}, "b": [{"Fn::If": ["C", {"Ref": "AWS::NoValue"}, 2]}, 3]}
    assert rules.resolve(value, {"C": True}) == {"a": 1, "b": [3]}
    assert rules.resolve(value, {"C": False}) == {"b": [2, 3]}
