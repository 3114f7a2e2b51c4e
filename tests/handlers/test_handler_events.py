"""Every events/*.json file through its handler: the case name says what must happen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmemo import tools
from xmemo.local.template import routes_of
from xmemo.models import RememberInput

from tests.event_checks import REST_EVENT_FILES, case_of, check_rest_answer, load_event, seed_reference, writer_of

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
EVENT_FILES = REST_EVENT_FILES


@pytest.mark.parametrize("relative", EVENT_FILES)
def test_event_file(relative, invoke, services):
    event = load_event(relative)
    case = case_of(relative)
    if case == "valid" and event.get("pathParameters"):
        seed_reference(services, event)
    status, body, headers = invoke(event)
    check_rest_answer(case, status, body, headers)


def test_every_rest_route_has_its_events():
    """A valid call, a missing scope and malformed input for every REST route (and a bound
    exceeded wherever the route takes a bounded parameter)."""
    covered: dict[tuple[str, str], set[str]] = {}
    for relative in EVENT_FILES:
        event = load_event(relative)
        covered.setdefault((event["httpMethod"], event["resource"]), set()).add(relative.split("/")[-1][:-5])
    for route in routes_of(TEMPLATE):
        if route.function in ("McpFunction", "OAuthFunction"):
            continue  # events/mcp/ (issue 4) and events/oauth/ (issue 15: public, no scopes) are tested elsewhere
        if not route.authorized:
            continue  # public routes take no scope (the console's static files: tests/unit/test_console.py)
        cases = covered.get((route.method, route.resource), set())
        assert {"valid", "missing_scope", "malformed"} <= cases, (route.method, route.resource, cases)
        if "{" not in route.resource:
            assert "out_of_bounds" in cases, (route.method, route.resource)


def test_events_carry_cognito_shaped_claims():
    for relative in EVENT_FILES:
        claims = load_event(relative)["requestContext"]["authorizer"]["claims"]
        assert all(isinstance(v, str) for v in claims.values()), relative
        assert claims["token_use"] == "access"
        assert all(s.startswith("xmemo/memory:") for s in claims["scope"].split(" "))


def test_remember_then_recall_context_through_handlers(invoke):
    write = load_event("remember/valid.json")
    status, body, _ = invoke(write)
    assert status == 201 and body["duplicate"] is False
    reference = body["memory"]["reference"]
    assert body["memory"]["boundary"] == "team:acme/project:memory-os"

    status, again, _ = invoke(write)
    assert status == 200 and again["duplicate"] is True and again["memory"]["reference"] == reference

    status, pack, _ = invoke(load_event("recall_context/valid.json"))
    assert status == 200
    assert [i["reference"] for i in pack["items"]] == [reference]
    assert pack["budget"]["used_tokens"] <= pack["budget"]["max_tokens"]
    assert pack["version"] == "1" and pack["context_text"].startswith("[1] ")

    status, listed, _ = invoke(load_event("memories_list/valid.json"))
    assert status == 200 and [m["reference"] for m in listed["memories"]] == [reference]


def test_list_query_string_filters_and_cursor(invoke, services):
    event = load_event("memories_list/valid.json")
    writer = writer_of(event)
    refs = [tools.remember(services, writer, RememberInput(content=f"note number {i}", tags=["t"] if i % 2 else [])).memory.reference for i in range(5)]
    event["queryStringParameters"] = {"limit": "2", "tags": "t"}
    event["multiValueQueryStringParameters"] = {"limit": ["2"], "tags": ["t"]}
    status, page, _ = invoke(event)
    assert status == 200 and [m["reference"] for m in page["memories"]] == [refs[3], refs[1]]
    assert page["next_cursor"] is None or isinstance(page["next_cursor"], str)

    event["queryStringParameters"] = {"limit": "2"}
    event["multiValueQueryStringParameters"] = {"limit": ["2"]}
    status, first, _ = invoke(event)
    assert [m["reference"] for m in first["memories"]] == [refs[4], refs[3]] and first["next_cursor"]
    event["queryStringParameters"] = {"limit": "2", "cursor": first["next_cursor"]}
    event["multiValueQueryStringParameters"] = {"limit": ["2"], "cursor": [first["next_cursor"]]}
    status, second, _ = invoke(event)
    assert [m["reference"] for m in second["memories"]] == [refs[2], refs[1]]

    event["queryStringParameters"] = {"colour": "red"}
    event["multiValueQueryStringParameters"] = {"colour": ["red"]}
    status, body, _ = invoke(event)
    assert status == 400 and body["error"]["code"] == "invalid_request"


def test_another_callers_reference_is_a_plain_404(invoke, services):
    event = load_event("memories_get/valid.json")
    seed_reference(services, event)
    status, _, _ = invoke(event)
    assert status == 200
    stranger = json.loads(json.dumps(event))
    stranger["requestContext"]["authorizer"]["claims"]["sub"] = "someone-else"
    stranger["requestContext"]["authorizer"]["claims"]["cognito:groups"] = "[]"
    missing = json.loads(json.dumps(event))
    missing["pathParameters"]["reference"] = "mem_01JNOTHERE000000000000000"
    s1, b1, _ = invoke(stranger)
    s2, b2, _ = invoke(missing)
    assert s1 == s2 == 404 and b1 == b2


def test_no_claims_is_401_and_wrong_team_is_403(invoke):
    event = load_event("recall/valid.json")
    del event["requestContext"]["authorizer"]
    status, body, _ = invoke(event)
    assert (status, body["error"]["code"]) == (401, "unauthorized")

    event = load_event("recall/valid.json")
    event["body"] = json.dumps({"query": "storage", "team": "not-mine"})
    status, body, _ = invoke(event)
    assert (status, body["error"]["code"]) == (403, "team_mismatch")


def test_forget_by_filter_refuses_a_reference(invoke):
    event = load_event("forget_filter/valid.json")
    event["body"] = json.dumps({"reference": "mem_01JEXAMPLE0000000000000000"})
    status, body, _ = invoke(event)
    assert (status, body["error"]["code"]) == (400, "invalid_request")

@pytest.mark.parametrize("query, status, code", [
    ({"include_temporary": ["true"]}, 403, "insufficient_scope"),  # a bool, so the scope check is reached
    ({"include_temporary": ["yes"]}, 400, "invalid_request"),  # not converted: the model refuses it
    ({"limit": ["101"]}, 422, "out_of_bounds"),  # an int, so the bound is what fails
    ({"limit": ["ten"]}, 400, "invalid_request"),
    ({"limit": ["2", "3"]}, 400, "invalid_request"),  # a scalar given twice
    ({"tags": ["a,b", "c"], "limit": ["5"]}, 200, None),  # a list: repeated and comma-separated
])
def test_list_query_parameters_are_typed_by_the_model(invoke, query, status, code):
    event = load_event("memories_list/valid.json")
    event["queryStringParameters"] = {k: v[-1] for k, v in query.items()}
    event["multiValueQueryStringParameters"] = query
    got, body, _ = invoke(event)
    assert got == status and (code is None or body["error"]["code"] == code), body
