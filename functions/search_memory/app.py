"""`POST /v1/search`: strict search, every term must match (scope memory:read)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import SearchInput, parse_input

app = api.resolver()


@app.post("/v1/search")
def search_memory():
    principal = api.authorize(app, READ)
    inp = parse_input(SearchInput, api.json_body(app))
    result = tools.search_memory(api.services(), principal, inp)
    api.count("search_memory")
    return api.respond(result)


lambda_handler = api.lambda_handler(app)
