"""The client's pure rules, no network: error mapping, Retry-After, backoff, token expiry,
request building, and XMemoStore's mapping of LangGraph namespaces and filters."""

from __future__ import annotations

import base64
import json
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import httpx
import pytest
from langgraph.store.base import MatchCondition

from xmemo import errors as domain
from xmemo.client import calls
from xmemo.client.auth import StaticToken, jwt_expiry
from xmemo.client.errors import APIError, RateLimitedError, ServerError, UnauthorizedError, error_from
from xmemo.client.transport import Retry, retry_after_of
from xmemo.integrations.langgraph import _fits, boundary_of, key_tag, location_of, matches, namespace_tag
from xmemo.status import STATUS

DOMAIN = {cls.code: cls for cls in domain.XMemoError.__subclasses__() if cls.__module__ == "xmemo.errors"}


@pytest.mark.parametrize("code", sorted(STATUS))
def test_every_spec_code_maps_to_a_typed_error_that_is_also_the_domain_error(code):
    body = {"error": {"code": code, "message": "m", "details": {"k": 1}}}
    exc = error_from(STATUS[code], body, 2.0)
    assert isinstance(exc, DOMAIN[code]) and isinstance(exc, APIError)
    assert (exc.status, exc.code, exc.message, exc.details, exc.retry_after) == (STATUS[code], code, "m", {"k": 1}, 2.0)


def test_answers_without_a_spec_body_map_by_status():
    assert isinstance(error_from(429, {"message": "Too Many Requests"}), RateLimitedError)
    assert isinstance(error_from(401, {"message": "Unauthorized"}), UnauthorizedError)  # API Gateway's own 401
    gateway_502 = error_from(502, None)
    assert type(gateway_502) is ServerError and gateway_502.code == "http_502"
    odd = error_from(418, "teapot")
    assert type(odd) is APIError and odd.code == "http_418" and odd.message == "HTTP 418"


def test_retry_after_in_seconds_or_as_a_date():
    assert retry_after_of(httpx.Response(503, headers={"Retry-After": "7"})) == 7
    when = datetime.now(timezone.utc) + timedelta(seconds=30)
    assert 25 < retry_after_of(httpx.Response(503, headers={"Retry-After": format_datetime(when, usegmt=True)})) <= 30
    assert retry_after_of(httpx.Response(503, headers={"Retry-After": "soon"})) is None
    assert retry_after_of(httpx.Response(503)) is None


def test_backoff_is_jittered_within_a_doubling_ceiling_and_retry_after_wins():
    policy = Retry(backoff=0.1, max_backoff=1.0)
    for attempt in range(8):
        ceiling = min(1.0, 0.1 * 2**attempt)
        assert all(ceiling / 2 <= policy.delay(attempt, None) <= ceiling for _ in range(50))
    assert all(3 <= policy.delay(0, 3) <= 3.6 for _ in range(50))


def _jwt(claims: dict) -> str:
    part = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"e30.{part}.sig"


def test_token_expiry_is_read_from_the_jwt_only_to_schedule_renewal():
    assert jwt_expiry(_jwt({"exp": 1234})) == 1234
    assert jwt_expiry(_jwt({"sub": "x"})) is None
    assert jwt_expiry("opaque-token") is None
    with pytest.raises(domain.XMemoError):
        StaticToken("  ")


def test_requests_send_only_what_was_given():
    assert calls.recall("q", None, {}).json == {"query": "q"}
    after = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert calls.search("q", 3, {"tags": ("a", "b"), "created_after": after}).json == {
        "query": "q", "limit": 3, "tags": ["a", "b"], "created_after": "2026-01-01T00:00:00+00:00"}
    page = calls.list_page(5, None, {"tags": ["a", "b"], "include_temporary": True, "bucket": "x"})
    assert page.method == "GET" and page.params == [("limit", "5"), ("tags", "a"), ("tags", "b"), ("include_temporary", "true"), ("bucket", "x")]
    assert calls.get("mem_a/b").path == "/v1/memories/mem_a%2Fb"
    assert calls.forget("mem_1", {}).idempotent is False and calls.forget(None, {"bucket": "b"}).idempotent is True
    with pytest.raises(ValueError):
        calls.forget("mem_1", {"bucket": "b"})


# ---------------------------------------------------------------------------------------
def test_namespace_labels_name_the_boundary_and_the_location():
    assert boundary_of(("team:acme", "project:orion", "x")) == {"team": "acme", "project": "orion"}
    assert boundary_of(("team:Not A Slug", "users")) == {}
    assert location_of(("a/b", "c|d", "e")) == "a%2Fb/c%7Cd/e"
    assert key_tag(("a",), "k") != key_tag(("a", "k"), "") and namespace_tag(("a", "b")) != namespace_tag(("ab",))


def test_value_filters_and_namespace_conditions():
    value = {"topic": "auth", "year": 2026, "meta": {"lang": "en", "n": 1}}
    assert matches(value, {"topic": "auth", "meta": {"lang": "en"}})
    assert matches(value, {"year": {"$gte": 2026, "$lt": 2027}}) and not matches(value, {"year": {"$ne": 2026}})
    assert not matches(value, {"missing": 1}) and not matches(value, {"year": {"$gt": "x"}})
    assert _fits(("a", "b", "c"), MatchCondition("prefix", ("a", "*")))
    assert _fits(("a", "b", "c"), MatchCondition("suffix", ("b", "c")))
    assert not _fits(("a",), MatchCondition("prefix", ("a", "b")))
