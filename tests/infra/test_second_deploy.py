"""Issue 38: a deployment that survives its second `sam deploy`. Each rule holds on
template.yaml and names the breakage on a copy of it broken in exactly that one place; the
version behaviour is shown on the SAM translator's own output, translated twice."""

from __future__ import annotations

import copy

import pytest

from infra import template_rules as rules
from infra.changes import change_of, create_only

R = "Resources"


def props(template, name):
    return template[R][name]["Properties"]


def version_ids(cfn) -> dict[str, str]:
    """function -> the logical id of the version SAM generated for it."""
    return {r["Properties"]["FunctionName"]["Ref"]: name for name, r in cfn[R].items() if r["Type"] == "AWS::Lambda::Version"}


def test_template_yaml_keeps_every_second_deploy_rule(source, cfn):
    assert rules.second_deploy_violations(source, cfn) == []


def test_every_variant_keeps_them(source):
    for parameters in ({"Profile": "production", "SnapStart": "false"}, {"ExistingUserPoolId": "eu-west-1_AbC123"},
                       {"ExistingOpenSearchEndpoint": "https://search-x.eu-west-1.es.amazonaws.com", "Embedder": "bedrock"}):
        cfn = rules.translate(source, parameters)
        assert rules.release_violations(source, cfn) + rules.replacement_violations(source, cfn) == [], parameters


# 1. code changes go live ----------------------------------------------------------------------
EMBEDDING = {"RememberFunction", "RecallFunction", "RecallContextFunction", "McpFunction"}


@pytest.mark.parametrize("layer, functions", [
    ("XMemoLayer", None),  # every function with an alias
    ("EmbedderLayer", EMBEDDING),
])
def test_a_new_layer_version_publishes_new_function_versions(source, cfn, layer, functions):
    """Only the layer's package changes (as `sam package` uploads it under a new key): every
    function that uses it gets a new version id, the others keep theirs."""
    changed = copy.deepcopy(source)
    props(changed, layer)["ContentUri"] = "s3://placeholder-bucket/layer-rebuilt.zip"
    before, after = version_ids(cfn), version_ids(rules.translate(changed))
    moved = {fn for fn in before if before[fn] != after[fn]}
    assert moved == (functions or set(before)), layer


def test_an_environment_change_publishes_new_versions(source, cfn):
    changed = copy.deepcopy(source)
    changed["Globals"]["Function"]["Environment"]["Variables"]["XMEMO_ENCODING"] = "cl100k_base"
    before, after = version_ids(cfn), version_ids(rules.translate(changed))
    assert all(before[fn] != after[fn] for fn in before)


@pytest.mark.parametrize("parameter", ["CapturePolicy", "PublicBaseUrl", "Embedder", "SnapStart", "ReleaseLabel"])
def test_a_parameter_change_replaces_every_version(cfn, parameter):
    """SAM's version ids do not see parameter values; the version descriptions do, and a
    version's description is create-only: CloudFormation publishes new versions."""
    versions = version_ids(cfn)
    assert set(versions.values()) <= change_of(cfn, parameter).replaced
    assert all(cfn[R][v]["Properties"]["Description"] == rules.RELEASE_VALUE for v in versions.values())


def test_without_the_release_settings_a_parameter_change_keeps_the_old_versions(template):
    """The state before issue 38: the alias kept serving the old CapturePolicy."""
    for name, resource in template[R].items():
        if resource["Type"] == "AWS::Serverless::Function":
            resource["Properties"].pop("VersionDescription", None)
    cfn = rules.translate(template)
    change = change_of(cfn, "CapturePolicy")
    assert "RememberFunction" in change.changed and not (set(version_ids(cfn).values()) & change.replaced)
    assert "parameter CapturePolicy: changes" in " ".join(rules.release_violations(template, cfn))


@pytest.mark.parametrize("breakage, message", [
    (lambda t: props(t, "SearchMemoryFunction").pop("AutoPublishAliasAllProperties"),
     "SearchMemoryFunction: no AutoPublishAliasAllProperties (a changed function publishes no version)"),
    (lambda t: props(t, "XMemoLayer").pop("PublishLambdaVersion"),
     "XMemoLayer: no PublishLambdaVersion (a new layer version leaves the alias on the old code)"),
    (lambda t: props(t, "RecallFunction").update(Layers=[{"Fn::If": ["UseBedrock", {"Ref": "AWS::NoValue"}, {"Ref": "EmbedderLayer"}]}]),
     "RecallFunction: layer {'Fn::If': ['UseBedrock', {'Ref': 'AWS::NoValue'}, {'Ref': 'EmbedderLayer'}]} is not a plain Ref "
     "(SAM publishes no version when it changes)"),
    (lambda t: props(t, "ForgetFunction").pop("VersionDescription"),
     "ForgetFunction: VersionDescription is not ReleaseSettings.Value (a parameter change publishes nothing)"),  # + its parameters
    (lambda t: t["Globals"]["Function"]["Environment"]["Variables"].pop("RELEASE_SETTINGS"),
     None),  # every function: Lambda would not publish an unchanged function
    (lambda t: t["Parameters"]["PublicBaseUrl"].update(MaxLength=400),
     "ReleaseSettings: up to 492 characters, over a version description's 256"),
])
def test_each_way_a_change_stays_unpublished_is_named(template, breakage, message):
    breakage(template)
    found = rules.release_violations(template, rules.translate(template))
    if message is None:
        assert found and all(v.endswith("environment lacks RELEASE_SETTINGS (Lambda publishes no version of an unchanged function)")
                             for v in found)
    elif message.startswith("ForgetFunction"):  # and then every parameter that reaches it changes it unpublished
        assert found[0] == message and found[1:] and all(v.startswith("parameter ") and "['ForgetFunction']" in v for v in found[1:])
    else:
        assert found == [message]


def test_a_parameter_left_out_of_the_release_settings_is_named(template):
    values = props(template, "ReleaseSettings")["Value"]["Fn::Join"][1]
    values.remove({"Ref": "CapturePolicy"})
    found = rules.release_violations(template, rules.translate(template))
    assert len(found) == 1 and found[0].startswith("parameter CapturePolicy: changes ['ConsoleFunction', ")
    assert found[0].endswith("without publishing new versions (the alias keeps the old configuration)")


def test_release_settings_fit_a_version_description(source):
    listed = sorted(r for r in rules._refs(props(source, "ReleaseSettings")["Value"]) if r in source["Parameters"])
    longest = sum(rules._max_length(source, p) for p in listed) + len(listed) - 1
    assert longest == 220 <= rules.VERSION_DESCRIPTION_LIMIT  # docs/deploy.md states 220


# 2. no parameter change replaces stored data by surprise ------------------------------------
def test_the_schemas_know_what_replaces():
    assert {"Domain", "UserPoolId"} <= create_only("AWS::Cognito::UserPoolDomain")
    assert "Description" in create_only("AWS::Lambda::Version")
    assert "EngineVersion" not in create_only("AWS::OpenSearchService::Domain")  # documented apart: REPLACED_UNLESS


def test_an_engine_upgrade_without_the_update_policy_replaces_the_domain(template):
    del template[R]["OpenSearchDomain"]["UpdatePolicy"]
    assert rules.replacement_violations(template, rules.translate(template)) == [
        "parameter OpenSearchEngineVersion: a change replaces OpenSearchDomain (AWS::OpenSearchService::Domain) through ['EngineVersion']"]


def test_a_replacement_follows_references(template):
    """A table named after the stage: a new StageName replaces the table; the stage is
    replaced too (StageName is create-only), and so is the WAF association naming it."""
    props(template, "OAuthStateTable")["TableName"] = {"Fn::Sub": "${AWS::StackName}-${StageName}-oauth"}
    cfn = rules.translate(template)
    assert {"OAuthStateTable", "XMemoApiStage", "WebAclAssociation"} <= change_of(cfn, "StageName").replaced
    assert rules.replacement_violations(template, cfn) == [
        "parameter StageName: a change replaces OAuthStateTable (AWS::DynamoDB::Table) through ['TableName']"]


def test_a_data_store_deleted_by_a_parameter_must_be_kept(template):
    template[R]["SnapshotBucket"]["DeletionPolicy"] = "Delete"
    assert rules.replacement_violations(template, rules.translate(template)) == [
        "parameter ExistingOpenSearchEndpoint: a change deletes SnapshotBucket with its data (DeletionPolicy 'Delete')"]


def test_the_hosted_domain_prefix_is_the_documented_exception(source, cfn):
    assert "UserPoolDomain" in change_of(cfn, "AuthDomainPrefix").replaced
    assert ("AuthDomainPrefix", "UserPoolDomain") in rules.PARAMETER_PROCEDURES
    assert "`AuthDomainPrefix`" in rules.GUIDE.read_text().split(rules.PROCEDURES_HEADING)[1]


def test_a_stale_procedure_entry_is_named(source, cfn, monkeypatch):
    monkeypatch.setitem(rules.PARAMETER_PROCEDURES, ("Profile", "OpenSearchDomain"), "never replaced")
    assert rules.replacement_violations(source, cfn) == [
        "PARAMETER_PROCEDURES: Profile no longer replaces OpenSearchDomain: remove the entry"]


def test_an_ssm_value_change_reaches_what_reads_it():
    """The engine on a small template: a parameter -> an SSM parameter's Value -> a version's
    create-only Description (replaced) -> the alias's version attribute (updated in place)."""
    cfn = {"Parameters": {"P": {"Type": "String"}, "Q": {"Type": "String"}},
           "Conditions": {"C": {"Fn::Equals": [{"Ref": "Q"}, "x"]}},
           R: {"S": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": {"Ref": "P"}}},
               "F": {"Type": "AWS::Lambda::Function", "Properties": {"Role": "r", "Code": {}}},
               "V": {"Type": "AWS::Lambda::Version", "Properties": {"FunctionName": {"Ref": "F"}, "Description": {"Fn::GetAtt": ["S", "Value"]}}},
               "A": {"Type": "AWS::Lambda::Alias", "Properties": {"FunctionName": {"Ref": "F"}, "Name": "live",
                                                                  "FunctionVersion": {"Fn::GetAtt": ["V", "Version"]}}},
               "T": {"Type": "AWS::DynamoDB::Table", "Condition": "C", "Properties": {}}}}
    change = change_of(cfn, "P")
    assert change.replaced == {"V"} and change.changed == {"S": {"Value"}, "V": {"Description"}, "A": {"FunctionVersion"}}
    assert change_of(cfn, "Q").toggled == {"T"} and not change_of(cfn, "Q").changed


# 4. the operator's findings ---------------------------------------------------------------------
def waf_rules(template):
    return props(template, "WebAcl")["Rules"]


def waf_rule(template, name):
    return next(r for r in waf_rules(template) if r["Name"] == name)


def common_overrides(template):
    return waf_rule(template, "aws-common")["Statement"]["ManagedRuleGroupStatement"]["RuleActionOverrides"]


@pytest.mark.parametrize("breakage, message", [
    (lambda t: props(t, "ApiGatewayLogsRole").update(ManagedPolicyArns=[], Policies=[{"PolicyName": "x", "PolicyDocument": {}}]),
     "ApiGatewayLogsRole: not the AWS-managed AmazonAPIGatewayPushToCloudWatchLogs policy alone "
     "(an inline policy cannot know the names of every API's log groups)"),
    (lambda t: t[R]["UserPool"].update(DeletionPolicy="Retain"),
     "UserPool: DeletionPolicy 'Retain' (RetainExceptOnCreate: a failed first deployment must not leave it behind)"),
    (lambda t: t[R]["ApiGatewayLogsRole"].update(DeletionPolicy="Retain"),
     "ApiGatewayLogsRole: DeletionPolicy 'Retain' (RetainExceptOnCreate: a failed first deployment must not leave it behind)"),
    (lambda t: props(t, "UserPool").update(DeletionProtection="ACTIVE"),
     "UserPool: created with deletion protection ACTIVE (a failed first deployment cannot delete it)"),
    (lambda t: [t[R]["OAuthStateTable"].pop(k) for k in ("DeletionPolicy", "UpdateReplacePolicy")],
     "OAuthStateTable: DeletionPolicy None / UpdateReplacePolicy None (registrations and refresh bindings must survive)"),
    (lambda t: props(t, "ConsoleFunction").update(Role={"Fn::GetAtt": ["ApiFunctionRole", "Arn"]}),
     "ConsoleFunction: serves static files to anyone on ApiFunctionRole, which may "
     "['aoss:APIAccessAll', 'bedrock:InvokeModel', 'es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost', 'es:ESHttpPut']"),
    (lambda t: props(t, "UserPool").pop("EmailConfiguration"),
     "UserPool: no optional SES sender (Cognito's own sender has a small daily quota)"),
    (lambda t: common_overrides(t).pop(),
     "WebAcl: NoUserAgent_HEADER blocks the OAuth facade's legitimate requests (override it to Count)"),
    (lambda t: waf_rules(t).remove(waf_rule(t, "aws-common-outside-oauth")),
     None),
    (lambda t: waf_rule(t, "aws-common-outside-oauth")["Statement"]["AndStatement"]["Statements"][1]["NotStatement"]["Statement"]
     ["OrStatement"]["Statements"][0]["ByteMatchStatement"].update(SearchString="/v1/recall"),
     "WebAcl.aws-common-outside-oauth: exempts ['/v1/recall'], which are not OAuth facade routes"),
    (lambda t: props(t, "WebAcl").pop("DataProtectionConfig"),
     "WebAcl: sampled requests show the Authorization header (DataProtectionConfig for it, or no sampling)"),
])
def test_each_finding_is_named(template, cfn, breakage, message):
    breakage(template)
    found = rules.operator_violations(template, cfn)
    if message is None:
        assert found == [f"WebAcl: nothing blocks {label} outside the OAuth routes (counted everywhere)"
                         for label in rules.OAUTH_TRIPPED_RULES.values()]
    else:
        assert found == [message]


def test_sampling_off_needs_no_data_protection(template, cfn):
    props(template, "WebAcl").pop("DataProtectionConfig")
    for config in [props(template, "WebAcl")["VisibilityConfig"]] + [r["VisibilityConfig"] for r in waf_rules(template)]:
        config["SampledRequestsEnabled"] = False
    assert rules.operator_violations(template, cfn) == []


def test_waf_logs_must_redact_the_authorization_header(template, cfn):
    template[R]["WafLogs"] = {"Type": "AWS::WAFv2::LoggingConfiguration",
                              "Properties": {"ResourceArn": {"Fn::GetAtt": ["WebAcl", "Arn"]}, "LogDestinationConfigs": ["arn"]}}
    assert rules.operator_violations(template, cfn) == ["WafLogs: WAF logs keep the Authorization header (RedactedFields)"]
    props(template, "WafLogs")["RedactedFields"] = [{"SingleHeader": {"Name": "authorization"}}]
    assert rules.operator_violations(template, cfn) == []


def test_the_old_throttle_alarm_had_no_headroom(template, cfn):
    """Nine metrics in one alarm: the state the operator found."""
    public = props(template, "PublicThrottleAlarm")["Metrics"][1:]
    merged = props(template, "LambdaThrottleAlarm")["Metrics"]
    merged += [{**m, "Id": f"m{len(merged) + i}"} for i, m in enumerate(public)]
    del template[R]["PublicThrottleAlarm"]
    assert rules.operator_violations(template, cfn) == [
        "LambdaThrottleAlarm: 9 metrics of the 10 a metric-math alarm may reference (keep 3 free)"]


def test_a_route_function_without_a_throttle_alarm_is_named(template, cfn):
    del template[R]["PublicThrottleAlarm"]
    assert rules.operator_violations(template, cfn) == [
        "ConsoleFunction: serves routes but no alarm watches its Throttles",
        "OAuthFunction: serves routes but no alarm watches its Throttles"]


def test_the_logs_role_is_the_one_managed_policy_iam_admits(cfn):
    assert rules.iam_violations(cfn) == []
    bad = copy.deepcopy(cfn)
    bad[R]["ConsoleFunctionRole"]["Properties"]["ManagedPolicyArns"] = [rules.API_LOGS_POLICY]
    assert rules.iam_violations(bad) == [f"ConsoleFunctionRole: managed policies {[rules.API_LOGS_POLICY]} (use a scoped inline policy)"]


# 5. the deploy guide as the template behaves ---------------------------------------------------
GUIDE = rules.GUIDE.read_text()
ROUTES = len(rules.PUBLIC_ROUTES)  # the guide states this count; the tests below move it


@pytest.mark.parametrize("edit, message", [
    (lambda g: g.replace(f"{ROUTES} public routes", "5 public routes"),
     f"docs/deploy.md: states ['5'] public routes; the template has {ROUTES}"),
    (lambda g: g.replace("`POST /oauth2/register`", "`POST /oauth2/registration`"),
     "docs/deploy.md: public route `POST /oauth2/register` is not listed"),
    (lambda g: g.replace("A failed first deployment leaves nothing behind", "A failed first deployment leaves little"),
     "docs/deploy.md: does not say a failed first deployment leaves nothing behind"),
    (lambda g: g.replace("### Engine upgrades", "### Engines"), "docs/deploy.md: no \"### Engine upgrades\" section naming EnableVersionUpgrade"),
    (lambda g: g.replace("`AuthDomainPrefix`", "the prefix"),
     "docs/deploy.md: '### Parameter changes that need a procedure' gives no procedure for `AuthDomainPrefix`"),
    (lambda g: g.replace("`eusc-de-east-1`", "eusc-de-east-1"),
     "docs/deploy.md: does not name `eusc-de-east-1` among the regions without SnapStart"),
    (lambda g: g.replace("| SnapStart restore |", "| restores |"),
     "docs/deploy.md: the cost lacks SnapStart cache (on 5.0 GB of function memory) or restore charges"),
])
def test_each_gap_of_the_guide_is_named(source, cfn, edit, message):
    assert rules.guide_violations(source, cfn, edit(GUIDE)) == [message]


def test_a_resource_a_failed_creation_leaves_must_be_named(template):
    template[R]["OAuthStateTable"]["DeletionPolicy"] = "Retain"
    assert rules.guide_violations(template, rules.translate(template), GUIDE) == [
        "docs/deploy.md: does not say a failed first deployment leaves OAuthStateTable"]


def test_a_new_public_route_must_reach_the_guide(template, cfn):
    props(template, "ConsoleFunction")["Events"]["Icon"] = {
        "Type": "Api", "Properties": {"RestApiId": {"Ref": "XMemoApi"}, "Path": "/favicon.ico", "Method": "GET", "Auth": {"Authorizer": "NONE"}}}
    assert rules.guide_violations(template, cfn, GUIDE) == [
        f"docs/deploy.md: states ['{ROUTES}'] public routes; the template has {ROUTES + 1}",
        "docs/deploy.md: public route `GET /favicon.ico` is not listed"]
