"""Stored logins: one per deployment, owner-only on disk, no access token ever written."""

from __future__ import annotations

import stat

import pytest

from xmemo import credentials
from xmemo.credentials import LoginError, StoredLogin, TokenSource


@pytest.fixture(autouse=True)
def config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XMEMO_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.delenv("XMEMO_CLIENT_ID", raising=False)
    monkeypatch.delenv("XMEMO_CLIENT_SECRET", raising=False)
    return tmp_path / "cfg"


def login(url="http://127.0.0.1:8787/mcp", **kw) -> StoredLogin:
    return StoredLogin(url=url, token_endpoint="http://127.0.0.1:8787/oauth2/token", client_id="c1",
                       refresh_token=kw.pop("refresh_token", "rt-secret"), **kw)


def test_save_is_owner_only_and_keeps_no_access_token(config_home):
    path = credentials.save(login(access_token="at-secret", expires_at=1e12))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(config_home.stat().st_mode) == 0o700
    text = path.read_text()
    assert "rt-secret" in text and "at-secret" not in text
    loaded = credentials.load("http://127.0.0.1:8787")
    assert loaded is not None and loaded.url == "http://127.0.0.1:8787" and loaded.access_token is None


def test_one_login_per_deployment():
    credentials.save(login("http://127.0.0.1:8787/mcp/full", refresh_token="a"))
    credentials.save(login("https://api.example.com/prod/mcp", refresh_token="b"))
    assert credentials.load("http://127.0.0.1:8787/mcp").refresh_token == "a"
    assert credentials.load("https://api.example.com/prod").refresh_token == "b"
    assert credentials.load() is None  # two stored: the caller must say which
    assert credentials.forget("https://api.example.com/prod/mcp")
    assert credentials.load().refresh_token == "a"


def test_a_login_never_shows_its_secrets():
    text = repr(login(access_token="at-secret"))
    assert "rt-secret" not in text and "at-secret" not in text


def test_a_fresh_cached_token_is_used_without_a_request():
    # the token endpoint is a closed port: a request would raise LoginError
    held = login(access_token="cached", expires_at=2e9)
    held = StoredLogin(**{**held.__dict__, "token_endpoint": "http://127.0.0.1:9/oauth2/token"})
    assert credentials.fresh_access_token(held, leeway=60) == ("cached", held)
    with pytest.raises(LoginError, match="unreachable"):
        credentials.fresh_access_token(held, leeway=3e9)


def test_no_credential_is_an_error():
    with pytest.raises(LoginError, match="not logged in"):
        TokenSource.for_url("http://127.0.0.1:8787/mcp")
