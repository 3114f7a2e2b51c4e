"""functions/console/app.py through the template's own routes, as API Gateway (or the local
gateway) invokes it: the page, its files, its sign-in configuration, and 404 for anything
else. No claims: the routes are public, and serve no data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xmemo.local.events import rest_event
from xmemo.local.functions import FunctionPool
from xmemo.local.template import routes_of

from tests.event_checks import check_console_page, check_not_found

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"


@pytest.fixture
def get(monkeypatch):
    routes = {r.resource: r for r in routes_of(TEMPLATE) if r.function == "ConsoleFunction"}
    assert set(routes) == {"/console", "/console/{asset}"} and not any(r.authorized for r in routes.values())

    def run(path: str, env: dict[str, str] | None = None):
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        resource, params = ("/console", {}) if path == "/console" else ("/console/{asset}", {"asset": path.rsplit("/", 1)[1]})
        pool = FunctionPool(routes[resource], size=1)  # a fresh container: settings read anew
        response = pool.invoke(rest_event("GET", resource, path, path_parameters=params))
        headers = {**(response.get("headers") or {}), **{k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}}
        return response["statusCode"], response["body"], headers

    return run


def test_the_page_and_its_files(get):
    check_console_page(*get("/console"))
    status, body, headers = get("/console/app.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript") and "X-Frame-Options" in headers


def test_anything_else_is_not_found(get):
    for path in ("/console/nope.js", "/console/index.html", "/console/..%2F__init__.py"):
        status, body, _ = get(path)
        check_not_found(status, body)


def test_the_sign_in_configuration_follows_the_deployment(get):
    status, body, headers = get("/console/config.json")
    assert status == 200 and json.loads(body)["login"] is None
    env = {"XMEMO_CONSOLE_AUTH_URL": "https://x.auth.eu-west-1.amazoncognito.com", "XMEMO_CONSOLE_CLIENT_ID": "abc"}
    status, body, headers = get("/console/config.json", env)
    assert json.loads(body)["login"]["client_id"] == "abc"
    assert "connect-src 'self' https://x.auth.eu-west-1.amazoncognito.com;" in headers["Content-Security-Policy"]
