"""`POST /v1/memories`: store one memory (scope memory:write). 201 when stored, 200 when
the same content was already in that boundary and bucket (`duplicate`)."""

from xmemo import api, policy, tools  # noqa: F401  policy: the capture rules compile at initialisation, not on the first write
from xmemo.auth import WRITE
from xmemo.models import RememberInput

app = api.resolver()


@app.post("/v1/memories")
def remember():
    return api.tool_route(app, tools.remember, WRITE, RememberInput, lambda: api.json_body(app),
                          status=lambda result: 200 if result.duplicate else 201)


lambda_handler = api.lambda_handler(app, tools=[tools.remember], embeds=True)
