"""The read-only record routes (scope memory:read): `GET /v1/memories` lists visible
memories by query-string filters with a cursor; `GET /v1/memories/{reference}` fetches one
(404 alike for another tenant's reference and a nonexistent one)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import GetInput, ListInput

app = api.resolver()


@app.get("/v1/memories")
def list_memories():
    return api.tool_route(app, tools.list_memories, READ, ListInput, lambda: api.query_input(app, ListInput))


@app.get("/v1/memories/<reference>")
def get_memory(reference: str):
    return api.tool_route(app, tools.get_memory, READ, GetInput, lambda: {"reference": api.path_param(app, "reference")})


lambda_handler = api.lambda_handler(app, tools=[tools.list_memories, tools.get_memory])
