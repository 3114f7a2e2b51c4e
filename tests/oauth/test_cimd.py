"""Client ID Metadata Documents: fetched under bounds (scheme, address, size, time, no
redirects), validated (it names itself, public client, valid redirect URIs), cached."""

from __future__ import annotations

import pytest

from xmemo.oauth.clients import Clients
from xmemo.oauth.errors import OAuthError
from xmemo.oauth.fetch import fetch
from xmemo.oauth.state import SqliteState

from .cimd_server import DocumentServer
from .conftest import ALL, loopback_fetch

CB = "http://127.0.0.1:40000/callback"


@pytest.fixture(scope="module")
def docs():
    server = DocumentServer()
    yield server
    server.close()


@pytest.fixture
def clients(tmp_path):
    return Clients(SqliteState(tmp_path / "s.sqlite3"), ALL, loopback_fetch, allow_loopback_http=True)


def refused(call, match: str) -> None:
    with pytest.raises(OAuthError) as err:
        call()
    assert err.value.error == "invalid_client" and not err.value.redirect and match in err.value.description


def test_a_valid_document_is_a_client_and_is_cached(docs, clients):
    url = docs.client_document("/ok.json", [CB, "https://app.example/cb"], scope=ALL[0])
    client = clients.resolve(url)
    assert client.client_id == url and client.redirect_uris == (CB, "https://app.example/cb") and client.scopes == (ALL[0],)
    clients.resolve(url)
    assert docs.hits["/ok.json"] == 1


def test_no_store_is_fetched_every_time(docs, clients):
    url = docs.client_document("/nostore.json", [CB])
    docs.pages["/nostore.json"] = (*docs.pages["/nostore.json"][:2], {"Cache-Control": "no-store"}, 0.0)
    clients.resolve(url)
    clients.resolve(url)
    assert docs.hits["/nostore.json"] == 2


def test_a_document_that_does_not_name_itself(docs, clients):
    url = docs.serve("/other.json", {"client_id": docs.url("/elsewhere.json"), "redirect_uris": [CB]})
    refused(lambda: clients.resolve(url), "does not name itself")


@pytest.mark.parametrize("doc, match", [
    ({"redirect_uris": ["http://example.com/cb"]}, "redirect URIs must be https"),
    ({"redirect_uris": []}, "lists no redirect_uris"),
    ({"redirect_uris": [CB], "token_endpoint_auth_method": "private_key_jwt"}, "only public clients"),
    ({"redirect_uris": [CB], "client_secret": "s"}, "must not carry a secret"),
    ({"redirect_uris": [CB], "scope": "admin"}, "unknown scope"),
])
def test_invalid_documents(docs, clients, doc, match):
    path = f"/bad-{abs(hash(repr(doc)))}.json"
    url = docs.url(path)
    docs.serve(path, {"client_id": url, **doc})
    refused(lambda: clients.resolve(url), match)


def test_not_json_or_not_found(docs, clients):
    refused(lambda: clients.resolve(docs.serve("/text.json", raw=b"<html>")), "not a JSON object")
    refused(lambda: clients.resolve(docs.url("/missing.json")), "answered HTTP 404")


def test_redirects_are_not_followed(docs, clients):
    url = docs.serve("/moved.json", raw=b"", status=302, headers={"Location": docs.url("/ok.json")})
    refused(lambda: clients.resolve(url), "answered HTTP 302")


def test_size_bound(docs, clients):
    url = docs.url("/big.json")
    docs.serve("/big.json", {"client_id": url, "redirect_uris": [CB], "client_name": "x" * 6000})
    refused(lambda: clients.resolve(url), "exceeds")


def test_time_bound(docs):
    url = docs.client_document("/slow.json", [CB])
    docs.pages["/slow.json"] = (*docs.pages["/slow.json"][:3], 3.0)
    refused(lambda: fetch(url, allow_loopback_http=True, timeout=0.5), "could not be fetched")


@pytest.mark.parametrize("url", [
    "https://10.0.0.5/client.json",
    "https://192.168.1.20/client.json",
    "https://169.254.169.254/latest/meta-data.json",
    "https://[::1]/client.json",
    "https://localhost/client.json",
])
def test_private_addresses_are_refused_before_connecting(url):
    refused(lambda: fetch(url), "not on a public address")


def test_plain_http_is_refused_except_loopback_where_allowed(docs, tmp_path):
    refused(lambda: fetch("http://example.com/client.json", allow_loopback_http=True), "over https")
    url = docs.client_document("/deployed.json", [CB])
    deployed = Clients(SqliteState(tmp_path / "d.sqlite3"), ALL, fetch, allow_loopback_http=False)  # as on AWS
    refused(lambda: deployed.resolve(url), "over https")
    refused(lambda: fetch(url), "over https")


@pytest.mark.parametrize("url", ["https://app.example", "https://app.example/", "https://app.example/c.json#x",
                                 "https://user:pw@app.example/c.json", "https://app.example/a/../c.json"])
def test_client_id_url_shape(clients, url):
    refused(lambda: clients.resolve(url), "client_id URL")
