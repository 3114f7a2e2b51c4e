"""`POST /v1/search`: strict search, every term must match (scope memory:read)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import SearchInput

app = api.resolver()


@app.post("/v1/search")
def search_memory():
    return api.tool_route(app, tools.search_memory, READ, SearchInput, lambda: api.json_body(app))


lambda_handler = api.lambda_handler(app, tools=[tools.search_memory])
