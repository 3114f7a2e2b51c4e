"""`POST /v1/recall`: the few most relevant memories, typo-tolerant (scope memory:read)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import RecallInput, parse_input

app = api.resolver()


@app.post("/v1/recall")
def recall():
    principal = api.authorize(app, READ)
    inp = parse_input(RecallInput, api.json_body(app))
    result = tools.recall(api.services(), principal, inp)
    api.count("recall")
    return api.respond(result)


lambda_handler = api.lambda_handler(app)
