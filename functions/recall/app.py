"""`POST /v1/recall`: the few most relevant memories, typo-tolerant (scope memory:read)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import RecallInput

app = api.resolver()


@app.post("/v1/recall")
def recall():
    return api.tool_route(app, tools.recall, READ, RecallInput, lambda: api.json_body(app))


lambda_handler = api.lambda_handler(app, tools=[tools.recall], embeds=True)
