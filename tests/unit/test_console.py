"""The console's static files and the rules they are served under (xmemo.console): every
file the page loads ships in the package, nothing runs inline (the CSP forbids it), no
string becomes markup, and the token is never put in storage another page could read."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from xmemo import console
from xmemo.models import MEMORY_TYPES

JS = {name: a.body for name, a in console.assets().items() if name.endswith(".js")}
CODE = {name: "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("//")) for name, body in JS.items()}


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.loads: list[str] = []
        self.inline: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if a.get(key, "").startswith("console/"):
                self.loads.append(a[key].removeprefix("console/"))
        if tag == "script" and "src" not in a:
            self.inline.append("inline <script>")
        if tag == "style":
            self.inline.append("<style>")
        self.inline += [f"{tag}[{k}]" for k in a if k == "style" or k.startswith("on")]


def page() -> _Page:
    parsed = _Page()
    parsed.feed(console.asset(console.INDEX).body)
    return parsed


def test_every_file_the_page_loads_ships_in_the_package():
    loads = page().loads
    assert {"app.js", "console.css"} <= set(loads)
    imported = {m for body in JS.values() for m in re.findall(r"from '\./([\w.-]+)'", body)}
    assert imported and all(console.asset(name) is not None for name in [*loads, *imported]), imported


def test_nothing_runs_inline_so_the_policy_needs_no_exception():
    assert page().inline == []
    policy = console.content_security_policy(None)
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "script-src 'self'" in policy and "default-src 'none'" in policy and "require-trusted-types-for 'script'" in policy


@pytest.mark.parametrize("sink", ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "localStorage", "document.cookie"])
def test_no_script_turns_strings_into_markup_or_stores_anywhere_shared(sink):
    assert [name for name, body in CODE.items() if sink in body] == []


def test_only_the_pkce_verifier_crosses_the_login_redirect_in_session_storage():
    assert [name for name, body in CODE.items() if "sessionStorage" in body] == ["auth.js"]
    uses = re.findall(r"sessionStorage\.(\w+)\(([^,)]*)", CODE["auth.js"])
    assert {(call, key) for call, key in uses} == {("setItem", "PKCE_KEY"), ("getItem", "PKCE_KEY"), ("removeItem", "PKCE_KEY")}


def test_a_request_path_is_a_key_never_a_file_path():
    assert console.asset("app.js") is not None
    for name in ("../__init__.py", "/etc/passwd", "static/app.js", "__init__.py", ""):
        assert console.asset(name) is None, name


def test_the_hosted_login_origin_is_the_only_other_one_the_page_may_call():
    url = "https://xmemo-1-eu-west-1.auth.eu-west-1.amazoncognito.com"
    assert "connect-src 'self' https://xmemo-1-eu-west-1.auth.eu-west-1.amazoncognito.com;" in console.content_security_policy(url + "/")
    assert "connect-src 'self';" in console.content_security_policy(None)
    assert console.origin_of("javascript:alert(1)") is None and console.origin_of("//host/x") is None


def test_config_names_the_hosted_login_only_when_configured():
    assert console.config(None, None, "xmemo")["login"] is None
    assert console.config(None, None, "xmemo")["types"] == list(MEMORY_TYPES)  # the filters' one source
    assert console.config("https://auth.example.com", None, "xmemo")["login"] is None
    login = console.config("https://auth.example.com/", "client123", "acme")["login"]
    assert login == {
        "authorize_url": "https://auth.example.com/oauth2/authorize",
        "token_url": "https://auth.example.com/oauth2/token",
        "client_id": "client123",
        "scopes": ["openid", "acme/memory:read", "acme/memory:write", "acme/memory:temporary"],
    }


def test_every_console_file_is_sent_with_the_lockdown_headers():
    h = console.headers("text/html; charset=utf-8", None, cache=False)
    assert h["X-Frame-Options"] == "DENY" and h["Referrer-Policy"] == "no-referrer" and h["X-Content-Type-Options"] == "nosniff"
    assert h["Cache-Control"] == "no-store"
    assert console.headers("text/css", None, cache=True)["Cache-Control"].startswith("public")
