"""Hostile input against the running local gateway: schemathesis generates requests from the
OpenAPI document the gateway itself serves (valid and invalid ones, with a real token);
no answer may be a 5xx, every 4xx has the SPEC §6 body, every 2xx/4xx conforms to the
document. Oversized and mis-framed bodies are refused before anything parses them."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from urllib.parse import urlsplit

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import response_schema_conformance, status_code_conformance

from xmemo.status import STATUS
from xmemo.local.template import routes_of
from xmemo.openapi import OPERATIONS, build_openapi
from xmemo.local.template import routes_of

from . import cases
from .surfaces import ROOT

pytestmark = pytest.mark.e2e

EXAMPLES = {GenerationMode.POSITIVE: 70, GenerationMode.NEGATIVE: 70}  # per operation: 8 × 140 = 1,120 cases
SPEC_CODES = set(STATUS)


def assert_spec_error(status: int, text: str, where: str) -> None:
    """SPEC §6: `{"error": {"code", "message", "details"?}}` with the code of the status."""
    body = json.loads(text)
    assert set(body) == {"error"}, f"{where}: {text[:300]}"
    err = body["error"]
    assert set(err) <= {"code", "message", "details"} and isinstance(err["message"], str), f"{where}: {text[:300]}"
    assert err["code"] in SPEC_CODES and STATUS[err["code"]] == status, f"{where}: {status} {text[:300]}"
    assert "Traceback" not in text and 'File "' not in text, f"{where}: stack trace in {text[:300]}"


# ---------------------------------------------------------------------------------------
def test_openapi_document_is_generated_from_template_and_models():
    doc = build_openapi(routes_of(ROOT / "template.yaml"))
    assert doc["openapi"].startswith("3.1")
    rest = {(r.method, r.resource) for r in routes_of(ROOT / "template.yaml") if r.resource.startswith("/v1/")}
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert documented == rest == set(OPERATIONS)
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            route = next(r for r in routes_of(ROOT / "template.yaml") if (r.method, r.resource) == (method.upper(), path))
            assert op["security"] == [{"cognito": list(route.scopes)}]
    remember = doc["components"]["schemas"]["RememberInput"]
    assert remember["properties"]["content"]["maxLength"] == 8000 and remember["additionalProperties"] is False
    assert "reference" not in doc["components"]["schemas"]["ForgetInput_forget_by_filter"]["properties"]


def test_openapi_cli_and_gateway_serve_the_same_document(security_gateway):
    served = httpx.get(f"{security_gateway.url}/openapi.json", timeout=30).json()  # unauthenticated, like a published spec
    printed = json.loads(security_gateway.cli("openapi", "--server", security_gateway.url).stdout)
    assert served == printed
    schemathesis.openapi.from_dict(served)  # a document schemathesis accepts


def test_a_reference_past_its_bound_is_out_of_bounds_and_documented(security_gateway):
    """The path parameter declares the reference's maxLength; one longer is `422
    out_of_bounds` on GET and DELETE alike, and the document says so (schemathesis found a
    DELETE answering an undocumented 422)."""
    doc = httpx.get(f"{security_gateway.url}/openapi.json", timeout=30).json()
    h = {"Authorization": f"Bearer {security_gateway.token('long', 'memory:read', 'memory:write')}"}
    url = f"{security_gateway.url}/v1/memories/{'m' * 65}"
    for method in ("get", "delete"):
        r = httpx.request(method.upper(), url, headers=h, timeout=30)
        assert r.status_code == 422 and r.json()["error"]["code"] == "out_of_bounds", (method, r.text)
        assert "422" in doc["paths"]["/v1/memories/{reference}"][method]["responses"], method


def test_schemathesis_against_the_gateway(security_gateway):
    """≥ 1,000 generated requests over HTTP, positive and negative, with a read+write token."""
    doc = httpx.get(f"{security_gateway.url}/openapi.json", timeout=30).json()
    schema = schemathesis.openapi.from_dict(doc)
    token = security_gateway.token("fuzzer", "memory:read", "memory:write", "memory:temporary", teams=["fuzz"])
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token}"
    tally = cases.Tally("schemathesis")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == len(OPERATIONS)
    for operation in operations:
        for mode, n in EXAMPLES.items():

            @settings(max_examples=n, deadline=None, database=None, phases=[Phase.explicit, Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(operation.as_strategy(generation_mode=mode))
            def fuzz(case):
                response = case.call(base_url=security_gateway.url, session=session, timeout=30)
                where = f"{operation.label} [{mode.value}] {case.body!r:.200} {case.query!r:.200} {case.path_parameters!r:.100}"
                assert response.status_code < 500, f"{where}: {response.status_code} {response.text[:300]}"
                if response.status_code >= 400:
                    assert_spec_error(response.status_code, response.text, where)
                case.validate_response(response, checks=[status_code_conformance, response_schema_conformance])
                tally.add()

            fuzz()
    print(f"schemathesis: {tally.n} cases over {len(operations)} operations")
    assert tally.n >= 1000, tally.n


# ---------------------------------------------------------------------------------------
# bodies refused before parsing
def raw_http(url: str, request: bytes, read_timeout: float = 30) -> bytes:
    """Send bytes as they are (no client-side fixing of framing) and read the answer."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=read_timeout) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                length = next((int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")), None)
                if length is not None and len(body) >= length:
                    break
        return b"".join(chunks)


def status_and_body(raw: bytes) -> tuple[int, str]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body.decode()


@pytest.mark.parametrize("size", [1_048_577, 10_000_000])
def test_oversized_body_is_400_before_parsing(security_gateway, size):
    token = security_gateway.token("big", "memory:write")
    started = time.monotonic()
    r = httpx.post(f"{security_gateway.url}/v1/memories", content=b"{" + b" " * (size - 2) + b"}",
                   headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, timeout=60)
    assert r.status_code == 400, r.text
    assert_spec_error(400, r.text, "oversized")
    assert "exceeds" in r.json()["error"]["message"]
    assert time.monotonic() - started < 30  # generous: it is refused, never parsed or hung


def test_lying_or_missing_framing_is_a_well_formed_400(security_gateway):
    host = urlsplit(security_gateway.url).netloc
    token = security_gateway.token("framer", "memory:write")
    for head in (
        f"POST /v1/memories HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Length: -5\r\n\r\n",
        f"POST /v1/memories HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Length: abc\r\n\r\n",
        f"POST /v1/memories HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        f"POST /v1/memories HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\nContent-Length: 99999999999\r\n\r\n",
    ):
        status, body = status_and_body(raw_http(security_gateway.url, head.encode()))
        assert status == 400, (head, body)
        assert_spec_error(400, body, head.splitlines()[-1])


def test_invalid_utf8_and_deep_nesting_are_400(security_gateway):
    h = {"Authorization": f"Bearer {security_gateway.token('odd', 'memory:read', 'memory:write')}"}
    for body in (b'{"content": "\xff\xfe bad"}', b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000):
        r = httpx.post(f"{security_gateway.url}/v1/memories", content=body, headers=h, timeout=60)
        assert r.status_code == 400, r.text[:300]
        assert_spec_error(400, r.text, repr(body[:20]))


def test_handler_refuses_oversized_body_itself(services, monkeypatch):
    """On AWS, API Gateway passes bodies up to 10 MB: the handler plumbing itself answers
    400 before `json.loads` ever sees an oversized body."""
    from xmemo import api
    from xmemo.local.events import rest_event
    from xmemo.local.functions import FunctionPool

    limit = services.settings.max_body_bytes
    real_loads = json.loads

    def guarded_loads(data, *a, **k):
        assert len(data) <= limit, "an oversized body reached json.loads"
        return real_loads(data, *a, **k)

    monkeypatch.setattr(json, "loads", guarded_loads)
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    route = next(r for r in routes_of(ROOT / "template.yaml") if (r.method, r.resource) == ("POST", "/v1/memories"))
    claims = {"sub": "big", "token_use": "access", "scope": "xmemo/memory:write"}
    pool = FunctionPool(route, 1)
    with api.using_services(services):
        for body, expected in ((json.dumps({"content": "x" * 10}) + " " * limit, 400), (json.dumps({"content": "fits"}), 201)):
            out = pool.invoke(rest_event("POST", "/v1/memories", "/v1/memories", body=body, claims=claims))
            assert out["statusCode"] == expected, out["body"]
            if expected == 400:
                assert_spec_error(400, out["body"], "handler")
