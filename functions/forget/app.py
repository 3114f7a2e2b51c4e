"""The deleting routes (scope memory:write): `DELETE /v1/memories/{reference}` and
`POST /v1/forget` (by filter). Both answer `{"deleted": n}`; a reference the caller cannot
see is 404, exactly as one that does not exist."""

from xmemo import api, tools
from xmemo.auth import WRITE
from xmemo.errors import InvalidRequest
from xmemo.models import ForgetInput, parse_input

app = api.resolver()


@app.delete("/v1/memories/<reference>")
def forget_reference(reference: str):
    principal = api.authorize(app, WRITE)
    inp = parse_input(ForgetInput, {"reference": api.path_param(app, "reference")})
    result = tools.forget(api.services(), principal, inp)
    api.count("forget")
    return api.respond(result)


@app.post("/v1/forget")
def forget_by_filter():
    principal = api.authorize(app, WRITE)
    body = api.json_body(app)
    if isinstance(body, dict) and "reference" in body:
        raise InvalidRequest("POST /v1/forget deletes by filter; use DELETE /v1/memories/{reference}")
    inp = parse_input(ForgetInput, body)
    result = tools.forget(api.services(), principal, inp)
    api.count("forget")
    return api.respond(result)


lambda_handler = api.lambda_handler(app)
