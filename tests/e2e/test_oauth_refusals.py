"""Every refusal the MCP authorization flow must make, each over HTTP against the local
gateway (`xmemo serve`), and none of them yielding a token: wrong or missing PKCE
verifier, reused code, code from another client, unregistered redirect URI, `resource`
naming another server, a CIMD document that does not name itself or sits on a private
address, scopes beyond the client's, an expired refresh token, a wrong password."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway
from tests.oauth.cimd_server import DocumentServer

pytestmark = pytest.mark.e2e
REDIRECT = "http://127.0.0.1:47001/callback"
PASSWORD = "refusal-password-1"
READ, WRITE = "xmemo/memory:read", "xmemo/memory:write"
REFRESH_TTL = 4


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    env = {"XMEMO_OAUTH_REFRESH_TTL_S": str(REFRESH_TTL),
           "XMEMO_OAUTH_LOGIN_FREE_FAILURES": "8"}  # the per-login limit is tested here; the throttle in tests/oauth
    with start_gateway(tmp_path_factory.mktemp("oauth-refusals"), env, cwd=ROOT) as gw:
        gw.add_user("erin", PASSWORD)
        yield gw


@pytest.fixture(scope="module")
def http(gateway):
    with httpx.Client(base_url=gateway.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def documents():
    server = DocumentServer()
    yield server
    server.close()


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def register(http, **extra) -> str:
    r = http.post("/oauth2/register", json={"redirect_uris": [REDIRECT], "client_name": "refusals", **extra})
    assert r.status_code == 201, r.text
    return r.json()["client_id"]


def authorize(http, gateway, client_id: str, verifier: str, **over) -> httpx.Response:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s1",
              "code_challenge": s256(verifier), "code_challenge_method": "S256", "resource": gateway.url + "/mcp",
              "scope": f"{READ} {WRITE}", **over}
    return http.get("/oauth2/authorize", params={k: v for k, v in params.items() if v is not None})


def submit(http, page: httpx.Response, password: str = PASSWORD) -> httpx.Response:
    txn = re.search(r'name="txn" value="([^"]+)"', page.text).group(1)
    return http.post("/oauth2/authorize", data={"txn": txn, "username": "erin", "password": password})


def code_for(http, gateway, client_id: str, verifier: str, **over) -> str:
    page = authorize(http, gateway, client_id, verifier, **over)
    assert page.status_code == 200, page.text
    sent = submit(http, page)
    assert sent.status_code == 303
    return parse_qs(urlsplit(sent.headers["location"]).query)["code"][0]


def token(http, **form) -> httpx.Response:
    r = http.post("/oauth2/token", data={k: v for k, v in form.items() if v is not None})
    assert "access_token" not in r.text, "a refusal must not yield a token"
    return r


def exchange(http, gateway, client_id, code, verifier, **over) -> httpx.Response:
    return token(http, **{"grant_type": "authorization_code", "client_id": client_id, "code": code, "redirect_uri": REDIRECT,
                          "code_verifier": verifier, "resource": gateway.url + "/mcp", **over})


def assert_error(r: httpx.Response, status: int, error: str) -> None:
    assert (r.status_code, r.json()["error"]) == (status, error), r.text
    assert r.headers["cache-control"] == "no-store"


def redirected_error(r: httpx.Response, gateway, error: str) -> None:
    assert r.status_code == 302, r.text
    location = r.headers["location"]
    query = parse_qs(urlsplit(location).query)
    assert location.startswith(REDIRECT + "?") and query["error"] == [error] and query["iss"] == [gateway.url]
    assert "code" not in query


def test_wrong_pkce_verifier(http, gateway):
    client, verifier = register(http), secrets.token_urlsafe(48)
    code = code_for(http, gateway, client, verifier)
    assert_error(exchange(http, gateway, client, code, secrets.token_urlsafe(48)), 400, "invalid_grant")
    assert_error(exchange(http, gateway, client, code, verifier), 400, "invalid_grant")  # that attempt spent the code


def test_missing_pkce_verifier(http, gateway):
    client, verifier = register(http), secrets.token_urlsafe(48)
    code = code_for(http, gateway, client, verifier)
    assert_error(exchange(http, gateway, client, code, None), 400, "invalid_grant")


def test_authorization_without_pkce(http, gateway):
    client = register(http)
    redirected_error(authorize(http, gateway, client, "x" * 43, code_challenge=None, code_challenge_method=None), gateway, "invalid_request")
    redirected_error(authorize(http, gateway, client, "x" * 43, code_challenge_method="plain"), gateway, "invalid_request")


def test_reused_code(http, gateway):
    client, verifier = register(http), secrets.token_urlsafe(48)
    code = code_for(http, gateway, client, verifier)
    first = http.post("/oauth2/token", data={"grant_type": "authorization_code", "client_id": client, "code": code,
                                             "redirect_uri": REDIRECT, "code_verifier": verifier})
    assert first.status_code == 200 and first.json()["access_token"]
    assert_error(exchange(http, gateway, client, code, verifier), 400, "invalid_grant")


def test_code_from_another_client(http, gateway):
    victim, attacker, verifier = register(http), register(http), secrets.token_urlsafe(48)
    code = code_for(http, gateway, victim, verifier)
    assert_error(exchange(http, gateway, attacker, code, verifier), 400, "invalid_grant")


def test_redirect_uri_not_registered(http, gateway):
    client = register(http)
    r = authorize(http, gateway, client, "v" * 43, redirect_uri="http://127.0.0.1:47002/elsewhere")  # any port, never another path
    assert r.status_code == 400 and "location" not in r.headers and "not registered" in r.text  # shown, never followed
    verifier = secrets.token_urlsafe(48)
    code = code_for(http, gateway, client, verifier)
    assert_error(exchange(http, gateway, client, code, verifier, redirect_uri="http://127.0.0.1:47001/other"), 400, "invalid_grant")


def test_registration_refuses_plain_http_and_confidential_clients(http):
    r = http.post("/oauth2/register", json={"redirect_uris": ["http://evil.example/cb"]})
    assert (r.status_code, r.json()["error"]) == (400, "invalid_redirect_uri")
    r = http.post("/oauth2/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"})
    assert (r.status_code, r.json()["error"]) == (400, "invalid_client_metadata")


def test_a_confidential_client_over_http(http, gateway):
    """The TypeScript SDK's example registers with client_secret_post; its token requests
    then use the method the registration answer names. Basic is refused with a challenge."""
    answer = http.post("/oauth2/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "client_secret_post"})
    assert answer.status_code == 201 and answer.json()["token_endpoint_auth_method"] == "client_secret_post"
    client, secret = answer.json()["client_id"], answer.json()["client_secret"]
    verifier = secrets.token_urlsafe(48)
    r = exchange(http, gateway, client, code_for(http, gateway, client, verifier), verifier)
    assert_error(r, 401, "invalid_client")
    assert r.headers["www-authenticate"].startswith("Basic")
    ok = http.post("/oauth2/token", data={"grant_type": "authorization_code", "client_id": client, "client_secret": secret,
                                          "code": code_for(http, gateway, client, verifier), "redirect_uri": REDIRECT,
                                          "code_verifier": verifier})
    assert ok.status_code == 200 and ok.json()["access_token"]
    meta = http.get("/.well-known/oauth-authorization-server").json()
    assert set(meta["token_endpoint_auth_methods_supported"]) == {"none", "client_secret_basic", "client_secret_post"}


def test_resource_naming_another_server(http, gateway):
    client = register(http)
    redirected_error(authorize(http, gateway, client, "v" * 43, resource="https://other.example/mcp"), gateway, "invalid_target")
    verifier = secrets.token_urlsafe(48)
    code = code_for(http, gateway, client, verifier)
    assert_error(exchange(http, gateway, client, code, verifier, resource="https://other.example/mcp"), 400, "invalid_target")


def test_cimd_that_does_not_name_itself(http, gateway, documents):
    url = documents.serve("/impostor.json", {"client_id": "https://claude.ai/oauth/client.json", "redirect_uris": [REDIRECT]})
    r = authorize(http, gateway, url, "v" * 43)
    assert r.status_code == 400 and "location" not in r.headers and "does not name itself" in r.text


@pytest.mark.parametrize("url", ["https://10.1.2.3/client.json", "https://169.254.169.254/client.json"])
def test_cimd_on_a_private_address(http, gateway, url):
    r = authorize(http, gateway, url, "v" * 43)
    assert r.status_code == 400 and "location" not in r.headers and "not on a public address" in r.text


def test_cimd_on_loopback_https_without_a_server(http, gateway):
    """The local gateway fetches loopback documents (its clients run on the same machine);
    nothing answers on 443 here, so the login stops with no redirect."""
    r = authorize(http, gateway, "https://localhost/client.json", "v" * 43)
    assert r.status_code == 400 and "location" not in r.headers and "could not be fetched" in r.text


def test_scopes_beyond_the_clients(http, gateway):
    client = register(http, scope=READ)
    redirected_error(authorize(http, gateway, client, "v" * 43, scope=f"{READ} {WRITE}"), gateway, "invalid_scope")
    redirected_error(authorize(http, gateway, client, "v" * 43, scope="xmemo/memory:admin"), gateway, "invalid_scope")


def test_expired_refresh_token(http, gateway):
    client, verifier = register(http), secrets.token_urlsafe(48)
    code = code_for(http, gateway, client, verifier)
    issued = http.post("/oauth2/token", data={"grant_type": "authorization_code", "client_id": client, "code": code,
                                              "redirect_uri": REDIRECT, "code_verifier": verifier}).json()
    refresh = {"grant_type": "refresh_token", "client_id": client, "refresh_token": issued["refresh_token"]}
    assert http.post("/oauth2/token", data=refresh).status_code == 200  # still valid
    assert_error(token(http, **{**refresh, "client_id": register(http)}), 400, "invalid_grant")  # not another client's
    time.sleep(REFRESH_TTL + 0.5)
    assert_error(token(http, **refresh), 400, "invalid_grant")


def test_wrong_password(http, gateway):
    client = register(http)
    page = authorize(http, gateway, client, "v" * 43)
    r = submit(http, page, password="not-the-password")
    assert r.status_code == 401 and "Wrong user name or password" in r.text and "location" not in r.headers
    for _ in range(3):
        submit(http, page, password="still-wrong")
    r = submit(http, page, password="still-wrong")  # the fifth: the login is over, the client is told
    query = parse_qs(urlsplit(r.headers["location"]).query)
    assert r.status_code == 303 and query["error"] == ["access_denied"] and "code" not in query
    assert submit(http, page).status_code == 400  # even the right password cannot revive it
    log = (gateway.settings.data_dir / "gateway.log").read_text()
    failed = [line for line in log.splitlines() if "login failed: account=" in line]  # (Powertools' JSON lines)
    assert len(failed) >= 5 and "address=loopback" in failed[-1]  # one line per wrong password
    assert not any(s in log for s in ("not-the-password", "still-wrong", PASSWORD, "erin"))


@pytest.mark.parametrize("path, method", [("/.well-known/oauth-protected-resource/mcp", "GET"),
                                          ("/.well-known/oauth-protected-resource", "GET"),
                                          ("/.well-known/oauth-authorization-server", "GET"),
                                          ("/.well-known/openid-configuration", "GET"),
                                          ("/oauth2/register", "POST"), ("/oauth2/token", "POST")])
def test_cors_for_browser_clients(http, path, method):
    """A browser-based client (MCP Inspector) discovers, registers and redeems from another
    origin: the preflight is answered, every answer (refusals too) names any origin, and
    no credentials are ever allowed."""
    origin = "http://localhost:6274"
    pre = http.options(path, headers={"Origin": origin, "Access-Control-Request-Method": method,
                                      "Access-Control-Request-Headers": "content-type,authorization,mcp-protocol-version"})
    assert pre.status_code == 204 and pre.headers["access-control-allow-origin"] == "*"
    assert method in pre.headers["access-control-allow-methods"]
    allowed = {h.strip().lower() for h in pre.headers["access-control-allow-headers"].split(",")}
    assert {"content-type", "authorization", "mcp-protocol-version"} <= allowed
    r = http.request(method, path, headers={"Origin": origin}, **({"data": {"grant_type": "nope"}} if path.endswith("token") else
                                                                    {"json": {"redirect_uris": [REDIRECT]}} if method == "POST" else {}))
    assert r.headers["access-control-allow-origin"] == "*", (r.status_code, r.headers)
    for answer in (pre, r):
        assert "access-control-allow-credentials" not in answer.headers


def test_no_cors_on_the_login_form_or_mcp(http, gateway):
    client = register(http)
    page = authorize(http, gateway, client, "v" * 43)
    assert "access-control-allow-origin" not in page.headers
    for r in (http.options("/oauth2/authorize", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}),
              http.post("/mcp", headers={"Origin": f"{gateway.url}"}, json={})):
        assert "access-control-allow-origin" not in r.headers
