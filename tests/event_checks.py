"""What each events/ file must answer: one definition for the tests that run the handlers
in-process (tests/handlers, tests/unit/test_mcp_events.py) and for those that run them in a
Lambda container through the SAM CLI (tests/sam_local)."""

from __future__ import annotations

import json
from dataclasses import replace

from xmemo import tools
from xmemo.auth import principal_from_claims
from xmemo.models import RememberInput

from tests import ROOT

EVENTS = ROOT / "events"
# Not API Gateway events: mcp/ (MCP_ANSWERS), oauth/ (tests/oauth/test_aws_facade.py), and the
# trigger, schedule and custom-resource events (the checks at the end of this module).
NOT_REST = ("mcp", "oauth", "pre_token", "purge", "index_init")
REST_EVENT_FILES = sorted(str(p.relative_to(EVENTS)) for p in EVENTS.glob("*/*.json") if p.parent.name not in NOT_REST)
REFUSALS = {
    "missing_scope": (403, "insufficient_scope"),
    "out_of_bounds": (422, "out_of_bounds"),
    "malformed": (400, "invalid_request"),
}


def load_event(relative: str) -> dict:
    return json.loads((EVENTS / relative).read_text())


def case_of(relative: str) -> str:
    """`remember/missing_scope.json` → `missing_scope`."""
    return relative.split("/")[-1].removesuffix(".json")


def writer_of(event: dict):
    """The event's caller, allowed to write (to seed data for read events)."""
    principal = principal_from_claims(event["requestContext"]["authorizer"]["claims"], "xmemo")
    return replace(principal, scopes=frozenset({"xmemo/memory:write"}))


def seed_reference(services, event: dict) -> None:
    """Store a memory under the event's caller with the reference named in its path, so the
    `valid` get/delete events find something."""
    result = tools.remember(services, writer_of(event), RememberInput(content="seeded memory for the get/delete events"))
    memory = result.memory.model_copy(update={"reference": event["pathParameters"]["reference"], "content_sha256": "seed"})
    services.store.insert(memory)


def check_rest_answer(case: str, status: int, body: dict, headers: dict) -> None:
    """A REST event's answer: `valid` succeeds with JSON, every other case is its SPEC §6 refusal."""
    if case == "valid":
        assert status in (200, 201), body
        assert "error" not in body
        assert headers["Content-Type"] == "application/json"
    else:
        expected_status, expected_code = REFUSALS[case]
        assert (status, body["error"]["code"]) == (expected_status, expected_code), body
        assert set(body) == {"error"} and set(body["error"]) <= {"code", "message", "details"}


def _initialize(status, headers, body, issuer):
    assert status == 200 and body["result"]["protocolVersion"] == "2025-11-25", body


def _tools_list(status, headers, body, issuer):
    assert [t["name"] for t in body["result"]["tools"]] == ["recall_context", "recall", "search_memory", "remember"], body


def _recall_context_on_an_empty_store(status, headers, body, issuer):
    assert body["result"]["content"][0]["text"] == "No matching XMemo memory was found.", body


def _out_of_bounds(status, headers, body, issuer):
    result = body["result"]
    assert result["isError"] and result["content"][0]["text"] == "Error 422 out_of_bounds: out of bounds: limit", body


def _server_discover(status, headers, body, issuer):
    assert body["result"]["supportedVersions"][0] == "2026-07-28", body


def _get_405(status, headers, body, issuer):
    assert status == 405, (status, body)


def _no_token(status, headers, body, issuer):
    assert status == 401 and headers["WWW-Authenticate"] == (
        'Bearer resource_metadata="https://abc123.execute-api.us-east-1.amazonaws.com/prod/.well-known/oauth-protected-resource/mcp"')


def _resource_metadata(status, headers, doc, issuer):
    assert status == 200 and doc["authorization_servers"] == [issuer]
    assert doc["resource"] == "https://abc123.execute-api.us-east-1.amazonaws.com/prod/mcp"


# events/mcp/<name>.json → check(status, headers, body, issuer): `issuer` is XMEMO_OAUTH_ISSUER;
# the store is empty.
MCP_ANSWERS = {
    "initialize": _initialize,
    "tools_list": _tools_list,
    "tools_call_recall_context": _recall_context_on_an_empty_store,
    "tools_call_out_of_bounds": _out_of_bounds,
    "server_discover_2026": _server_discover,
    "get_405": _get_405,
    "no_token": _no_token,
    "resource_metadata": _resource_metadata,
}


def check_oauth_metadata(status: int, meta: dict, base: str) -> None:
    """events/oauth/metadata.json on a configured authorization server at `base`."""
    assert status == 200 and meta["issuer"] == base and meta["registration_endpoint"] == f"{base}/oauth2/register"
    assert meta["client_id_metadata_document_supported"] is True and meta["code_challenge_methods_supported"] == ["S256"]


def check_oauth_unconfigured(status: int, body: str) -> None:
    """Any OAuth route while the stack has no PublicBaseUrl: a 404 that says what is missing."""
    assert status == 404 and "PublicBaseUrl" in body, (status, body)


def check_console_page(status: int, body: str, headers: dict) -> None:
    """GET /console: the page, its script, a strict CSP, never cached."""
    assert status == 200 and headers["Content-Type"].startswith("text/html") and '<script type="module" src="console/app.js">' in body
    assert "default-src 'none'" in headers["Content-Security-Policy"] and headers["Cache-Control"] == "no-store"


def check_not_found(status: int, body: str) -> None:
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found", (status, body)


# -- events that do not come from API Gateway ---------------------------------------------
CLIENT_TEAMS = "acme,platform"  # what the client's SSM parameter holds in the tests


def check_pre_token_client_credentials(answer: dict) -> None:
    """events/pre_token/client_credentials.json: the event back, `custom:teams` added from the
    client's parameter (never from the caller's clientMetadata)."""
    sent = load_event("pre_token/client_credentials.json")
    assert answer["response"] == {"claimsAndScopeOverrideDetails": {
        "accessTokenGeneration": {"claimsToAddOrOverride": {"custom:teams": CLIENT_TEAMS}}}}, answer
    assert {k: v for k, v in answer.items() if k != "response"} == {k: v for k, v in sent.items() if k != "response"}


def check_pre_token_version_1(error: dict) -> None:
    """events/pre_token/version_1.json: a V1 trigger cannot customise access tokens; the
    function fails (Cognito then refuses the sign-in) and says how to configure it."""
    assert error["errorType"] == "ValueError" and "LambdaVersion V3_0" in error["errorMessage"], error


def check_index_init_answer(event_name: str, document: dict) -> None:
    """What the custom resource PUT to the event's ResponseURL: SUCCESS with the created index
    for events/index_init/create.json, FAILED naming the request type for the unknown one."""
    event = load_event(f"index_init/{event_name}.json")
    assert (document["StackId"], document["RequestId"], document["LogicalResourceId"]) == (
        event["StackId"], event["RequestId"], event["LogicalResourceId"]), document
    if event_name == "create":
        assert document["Status"] == "SUCCESS" and document["Data"]["action"] == "created", document
        assert document["Data"]["index"].startswith(document["Data"]["alias"] + "-v"), document
    else:
        assert document["Status"] == "FAILED" and document["Reason"] == "ValueError: unknown RequestType 'Rename'", document
        assert document["PhysicalResourceId"] == event["PhysicalResourceId"] and document["Data"] == {}, document
