"""The read-only record routes (scope memory:read): `GET /v1/memories` lists visible
memories by query-string filters with a cursor; `GET /v1/memories/{reference}` fetches one
(404 alike for another tenant's reference and a nonexistent one)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import GetInput, ListInput, parse_input

app = api.resolver()


@app.get("/v1/memories")
def list_memories():
    principal = api.authorize(app, READ)
    inp = parse_input(ListInput, api.query_input(app))
    result = tools.list_memories(api.services(), principal, inp)
    api.count("list_memories")
    return api.respond(result)


@app.get("/v1/memories/<reference>")
def get_memory(reference: str):
    principal = api.authorize(app, READ)
    inp = parse_input(GetInput, {"reference": api.path_param(app, "reference")})
    result = tools.get_memory(api.services(), principal, inp)
    api.count("get_memory")
    return api.respond(result)


lambda_handler = api.lambda_handler(app)
