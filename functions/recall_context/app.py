"""`POST /v1/context`: a token-budgeted context pack; changes nothing (scope memory:read)."""

from xmemo import api, tools
from xmemo.auth import READ
from xmemo.models import ContextInput, parse_input

app = api.resolver()


@app.post("/v1/context")
def recall_context():
    principal = api.authorize(app, READ)
    inp = parse_input(ContextInput, api.json_body(app))
    result = tools.recall_context(api.services(), principal, inp)
    api.count("recall_context")
    return api.respond(result)


lambda_handler = api.lambda_handler(app)
