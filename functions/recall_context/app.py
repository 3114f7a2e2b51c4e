"""`POST /v1/context`: a token-budgeted context pack; changes nothing (scope memory:read)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import ContextInput

app = api.resolver()


@app.post("/v1/context")
def recall_context():
    return api.tool_route(app, tools.recall_context, READ, ContextInput, lambda: api.json_body(app))


lambda_handler = api.lambda_handler(app, tools=[tools.recall_context], packs=True, embeds=True)
