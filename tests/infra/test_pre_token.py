"""functions/pre_token: the Cognito V3 trigger's event/response shape and its team lookup."""

from __future__ import annotations

import copy

import pytest

from tests.infra.conftest import load_handler

ENV = {"CLIENT_TEAMS_PREFIX": "/xmemo/stack/client-teams"}

# A client-credentials event as Cognito sends it with LambdaVersion V3_0.
M2M_EVENT = {
    "version": "3",
    "triggerSource": "TokenGeneration_ClientCredentials",
    "region": "eu-west-1",
    "userPoolId": "eu-west-1_AbC123",
    "userName": None,
    "callerContext": {"awsSdkVersion": "aws-sdk-unknown-unknown", "clientId": "5abc7client"},
    "request": {
        "userAttributes": {},
        "groupConfiguration": {"groupsToOverride": [], "iamRolesToOverride": [], "preferredRole": None},
        "scopes": ["xmemo/memory:read", "xmemo/memory:write"],
        "clientMetadata": {"teams": "everyone"},  # caller-controlled: must be ignored
    },
    "response": {"claimsAndScopeOverrideDetails": None},
}

USER_EVENT = {
    **copy.deepcopy(M2M_EVENT),
    "version": "2",
    "triggerSource": "TokenGeneration_HostedAuth",
    "userName": "alice",
    "request": {
        "userAttributes": {"sub": "u-1", "email": "alice@example.com"},
        "groupConfiguration": {"groupsToOverride": ["team:acme"], "iamRolesToOverride": [], "preferredRole": None},
        "scopes": ["openid", "xmemo/memory:read"],
    },
}


@pytest.fixture
def app():
    return load_handler("pre_token")  # fresh module: an empty cache per test


def test_client_credentials_tokens_get_custom_teams(app):
    asked = []

    def lookup(name):
        asked.append(name)
        return "acme,platform"

    out = app.lambda_handler(copy.deepcopy(M2M_EVENT), None, env=ENV, lookup=lookup)
    assert asked == ["/xmemo/stack/client-teams/5abc7client"]
    assert out["response"] == {"claimsAndScopeOverrideDetails": {
        "accessTokenGeneration": {"claimsToAddOrOverride": {"custom:teams": "acme,platform"}}}}
    # the rest of the event is returned untouched, as Cognito expects
    assert {k: v for k, v in out.items() if k != "response"} == {k: v for k, v in M2M_EVENT.items() if k != "response"}


def test_the_claim_parses_back_into_the_same_teams(app):
    from xmemo.auth import principal_from_claims

    out = app.lambda_handler(copy.deepcopy(M2M_EVENT), None, env=ENV, lookup=lambda _n: "acme, platform")
    claims = {"client_id": "5abc7client", "token_use": "access", "scope": "xmemo/memory:read",
              **out["response"]["claimsAndScopeOverrideDetails"]["accessTokenGeneration"]["claimsToAddOrOverride"]}
    assert set(principal_from_claims(claims, "xmemo").teams) == {"acme", "platform"}


def test_a_client_without_teams_gets_no_claim_and_client_metadata_is_ignored(app):
    out = app.lambda_handler(copy.deepcopy(M2M_EVENT), None, env=ENV, lookup=lambda _n: None)
    assert out["response"] == {"claimsAndScopeOverrideDetails": None}


def test_user_tokens_are_left_alone(app):
    def lookup(_name):
        raise AssertionError("users need no lookup: cognito:groups carries team:<slug>")

    out = app.lambda_handler(copy.deepcopy(USER_EVENT), None, env=ENV, lookup=lookup)
    assert out == USER_EVENT


def test_a_v1_event_is_a_configuration_error(app):
    with pytest.raises(ValueError, match="V3_0"):
        app.lambda_handler({**copy.deepcopy(M2M_EVENT), "version": "1"}, None, env=ENV, lookup=lambda _n: "a")


def test_invalid_slugs_are_dropped_and_duplicates_merged(app):
    assert app.parse_teams("acme, team:ops,ACME!, ,acme,x") == ("acme", "ops", "x")
    assert app.parse_teams("a" * 64) == ()


def test_lookup_failure_issues_the_token_without_teams_or_with_the_cached_ones(app):
    clock = [0.0]
    answers = iter(["acme", RuntimeError("ssm down"), RuntimeError("ssm down")])

    def lookup(_name):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    now = lambda: clock[0]  # noqa: E731
    assert app.teams_of_client("c1", "/p", lookup, now) == ("acme",)
    clock[0] = 30.0
    assert app.teams_of_client("c1", "/p", lookup, now) == ("acme",)  # cached: no lookup
    clock[0] = 61.0
    assert app.teams_of_client("c1", "/p", lookup, now) == ("acme",)  # failed: last known teams
    assert app.teams_of_client("c2", "/p", lookup, now) == ()  # failed, nothing known: no teams


def test_ssm_lookup_reads_the_parameter_and_treats_missing_as_none(app):
    import boto3
    from botocore.stub import Stubber

    client = boto3.client("ssm", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    app._ssm_client = client
    with Stubber(client) as stub:
        stub.add_response("get_parameter", {"Parameter": {"Name": "/p/c1", "Type": "StringList", "Value": "acme,ops"}},
                          {"Name": "/p/c1"})
        stub.add_client_error("get_parameter", "ParameterNotFound", expected_params={"Name": "/p/c2"})
        assert app.ssm_lookup("/p/c1") == "acme,ops"
        assert app.ssm_lookup("/p/c2") is None
