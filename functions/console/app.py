"""Lambda handler of the memory console: `GET /console` (the page) and
`GET /console/{asset}` (its scripts, styles and `config.json`). Public on purpose: the
files hold no data, and the page reads memories only through the REST API with the
person's own token. All the console's rules live in `xmemo.console`."""

import json
from functools import lru_cache

from aws_lambda_powertools.event_handler import Response

from xmemo import api, console
from xmemo.config import Settings
from xmemo.errors import NotFound

app = api.resolver()


@lru_cache(maxsize=1)
def _settings() -> Settings:
    """Read once per container; the console never opens the store."""
    return Settings()


def _reply(body: str, content_type: str, *, cache: bool) -> Response:
    api.add_count("ConsoleFiles")
    return Response(200, content_type, body, console.headers(content_type, _settings().console_auth_url, cache=cache))


@app.get("/console")
def page():
    index = console.asset(console.INDEX)
    return _reply(index.body, index.content_type, cache=False)


@app.get("/console/<name>")
def asset(name: str):
    if name == console.CONFIG:
        s = _settings()
        body = json.dumps(console.config(s.console_auth_url, s.console_client_id, s.resource_server))
        return _reply(body, "application/json", cache=False)
    found = console.asset(name)
    if found is None or name == console.INDEX:
        raise NotFound("no such console file")
    return _reply(found.body, found.content_type, cache=True)


lambda_handler = api.lambda_handler(app)
