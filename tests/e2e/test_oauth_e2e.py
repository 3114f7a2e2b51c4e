"""End to end: the official MCP Python SDK's own OAuth client (mcp 1.x,
`OAuthClientProvider`) against the local gateway over HTTP, both registration paths:
401 → discovery → registration (RFC 7591, or a Client ID Metadata Document served on
loopback) → the login form, submitted over HTTP as a browser would → code → token →
tools/list and tools/call → the access token expires → silent refresh → call.

The gateway issues 3-second access tokens here (XMEMO_OAUTH_ACCESS_TTL_S), so expiry is
reached by waiting past it, not by faking a clock."""

from __future__ import annotations

import asyncio
import re
import time
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from tests import ROOT
from xmemo.local.spawn import start_gateway
from tests.oauth.cimd_server import DocumentServer

pytestmark = pytest.mark.e2e
ACCESS_TTL = 3
PASSWORD = "e2e-password-123"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    with start_gateway(tmp_path_factory.mktemp("oauth-gateway"), {"XMEMO_OAUTH_ACCESS_TTL_S": str(ACCESS_TTL)}, quiet=False, cwd=ROOT) as gw:
        gw.add_user("dana", PASSWORD, "acme")
        yield gw


@pytest.fixture(scope="module")
def documents():
    server = DocumentServer()
    yield server
    server.close()


class Browser:
    """The person at the browser: opens the authorization URL, fills in the login form,
    and hands the redirect's query back to the SDK's callback handler."""

    def __init__(self, issuer: str, username: str = "dana", password: str = PASSWORD):
        self.issuer, self.username, self.password = issuer, username, password
        self.logins = 0
        self.redirect: dict[str, list[str]] = {}

    async def open(self, authorization_url: str) -> None:
        self.logins += 1
        async with httpx.AsyncClient(timeout=30) as web:
            page = await web.get(authorization_url)
            assert page.status_code == 200 and "text/html" in page.headers["content-type"], page.text
            form = re.search(r'<form method="post" action="([^"]+)">', page.text)
            txn = re.search(r'name="txn" value="([^"]+)"', page.text)
            assert form and txn and 'name="username"' in page.text and 'name="password"' in page.text
            sent = await web.post(urljoin(authorization_url, form.group(1)),
                                  data={"txn": txn.group(1), "username": self.username, "password": self.password})
            assert sent.status_code == 303, sent.text
            self.redirect = parse_qs(urlsplit(sent.headers["location"]).query)
            assert self.redirect["iss"] == [self.issuer]  # RFC 9207

    async def callback(self) -> tuple[str, str | None]:
        return self.redirect["code"][0], self.redirect["state"][0]


class MemoryStorage:
    def __init__(self):
        self.tokens = self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


def provider(gateway, browser: Browser, storage: MemoryStorage, redirect_uri: str, client_metadata_url: str | None = None):
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata

    metadata = OAuthClientMetadata(client_name="xmemo e2e", redirect_uris=[redirect_uri],
                                   grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                                   token_endpoint_auth_method="none")
    auth = OAuthClientProvider(gateway.url + "/mcp", metadata, storage, browser.open, browser.callback)
    if client_metadata_url is not None:
        # The SDK accepts only https CIMD URLs in its constructor; the local gateway also
        # accepts a loopback http one, so the test sets it where the SDK keeps it.
        auth.context.client_metadata_url = client_metadata_url
    return auth


async def session_run(gateway, auth, topic: str):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(auth=auth, timeout=60) as http:
        async with streamable_http_client(gateway.url + "/mcp", http_client=http) as (read, write, _):
            async with ClientSession(read, write) as s:
                await s.initialize()
                names = [t.name for t in (await s.list_tools()).tools]
                stored = await s.call_tool("remember", {"content": f"OAuth e2e: the {topic} window is Tuesday.", "team": "acme"})
                first = auth.context.current_tokens.access_token
                await asyncio.sleep(ACCESS_TTL + 1.5)  # the access token has now expired
                found = await s.call_tool("recall", {"query": f"{topic} window Tuesday"})
                second = auth.context.current_tokens.access_token
                return names, stored, found, first, second


def access_log(gateway, path: str) -> list[str]:
    return [line for line in (gateway.settings.data_dir / "gateway.log").read_text().splitlines() if f" {path} " in line]


def run_flow(gateway, redirect_uri: str, topic: str, client_metadata_url: str | None = None):
    browser, storage = Browser(gateway.url), MemoryStorage()
    before = {p: len(access_log(gateway, p)) for p in ("/oauth2/register", "/oauth2/token")}
    auth = provider(gateway, browser, storage, redirect_uri, client_metadata_url)
    names, stored, found, first, second = asyncio.run(session_run(gateway, auth, topic))
    after = {p: len(access_log(gateway, p)) for p in before}
    return browser, storage, names, stored, found, first, second, {p: after[p] - before[p] for p in before}


def assert_worked(browser, storage, names, stored, found, first, second, redirect_uri, topic):
    assert names == ["recall_context", "recall", "search_memory", "remember"]
    assert not stored.isError and stored.content[0].text.startswith("Stored: Reference: mem_")
    assert not found.isError and f"the {topic} window is Tuesday" in found.content[0].text
    assert "Boundary: team:acme" in found.content[0].text  # the user's team came through Cognito-shaped claims
    assert browser.logins == 1  # expiry was handled without the person
    assert first != second and storage.tokens.refresh_token
    assert storage.client.redirect_uris[0].unicode_string() == redirect_uri


def test_dynamic_registration_flow(gateway):
    redirect_uri = "http://127.0.0.1:45123/callback"
    *outcome, calls = run_flow(gateway, redirect_uri, "deploy")
    assert_worked(*outcome, redirect_uri, "deploy")
    storage = outcome[1]
    assert storage.client.client_id.startswith("dcr_")
    assert calls == {"/oauth2/register": 1, "/oauth2/token": 2}  # one code exchange, one silent refresh


def test_client_id_metadata_document_flow(gateway, documents):
    redirect_uri = "http://127.0.0.1:45124/callback"
    url = documents.client_document("/xmemo-e2e-client.json", [redirect_uri])
    *outcome, calls = run_flow(gateway, redirect_uri, "release", client_metadata_url=url)
    assert_worked(*outcome, redirect_uri, "release")
    assert outcome[1].client.client_id == url
    assert calls == {"/oauth2/register": 0, "/oauth2/token": 2}
    assert documents.hits["/xmemo-e2e-client.json"] == 1  # fetched once, then cached


def test_metadata_documents(gateway):
    with httpx.Client(base_url=gateway.url, timeout=30) as http:
        as_meta = http.get("/.well-known/oauth-authorization-server").json()
        oidc = http.get("/.well-known/openid-configuration").json()
        prm = http.get("/.well-known/oauth-protected-resource/mcp").json()
    assert prm["authorization_servers"] == [gateway.url] == [as_meta["issuer"]]
    assert as_meta["code_challenge_methods_supported"] == ["S256"]
    assert as_meta["client_id_metadata_document_supported"] is True
    assert as_meta["grant_types_supported"] == ["authorization_code", "refresh_token", "client_credentials"]
    assert as_meta["scopes_supported"] == ["xmemo/memory:read", "xmemo/memory:write", "xmemo/memory:temporary"]
    assert {k: as_meta[k] for k in ("authorization_endpoint", "token_endpoint", "registration_endpoint")} == {
        "authorization_endpoint": gateway.url + "/oauth2/authorize", "token_endpoint": gateway.url + "/oauth2/token",
        "registration_endpoint": gateway.url + "/oauth2/register"}
    assert oidc["issuer"] == gateway.url and oidc["jwks_uri"] == gateway.url + "/.well-known/jwks.json"
    assert oidc == as_meta  # one document under both names


def test_the_log_never_shows_a_code_or_token(gateway):
    log = (gateway.settings.data_dir / "gateway.log").read_text()
    assert "/oauth2/authorize 200" in log  # the access log ran during this module's flows
    assert "code=" not in log and "refresh_token" not in log and PASSWORD not in log and "eyJ" not in log
    assert "?" not in "".join(line.split()[1] for line in log.splitlines() if line.startswith(("GET ", "POST ")))
