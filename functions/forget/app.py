"""The deleting routes (scope memory:write): `DELETE /v1/memories/{reference}` and
`POST /v1/forget` (by filter). Both answer `{"deleted": n}`; a reference the caller cannot
see is 404, exactly as one that does not exist."""

from xmemo import api, tools
from xmemo.auth import WRITE
from xmemo.errors import InvalidRequest
from xmemo.models import ForgetInput

app = api.resolver()


@app.delete("/v1/memories/<reference>")
def forget_reference(reference: str):
    return api.tool_route(app, tools.forget, WRITE, ForgetInput, lambda: {"reference": api.path_param(app, "reference")})


@app.post("/v1/forget")
def forget_by_filter():
    return api.tool_route(app, tools.forget, WRITE, ForgetInput, _filter_body)


def _filter_body():
    body = api.json_body(app)
    if isinstance(body, dict) and "reference" in body:
        raise InvalidRequest("POST /v1/forget deletes by filter; use DELETE /v1/memories/{reference}")
    return body


lambda_handler = api.lambda_handler(app, tools=[tools.forget])
