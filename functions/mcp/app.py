"""Lambda handler of the MCP endpoint: `POST /mcp` (public profile), `POST /mcp/full`
(full surface) and the RFC 9728 resource metadata, on the same resolver and entry point
as the REST handlers. JSON-RPC in, the same tool functions, JSON out; the protocol lives
in `xmemo.mcp`."""

from xmemo import api, policy  # noqa: F401  policy: the capture rules compile at initialisation (remember)
from xmemo.mcp import edge, registry

app = api.resolver()
edge.register(app)

lambda_handler = api.lambda_handler(app, models=registry.models(), packs=True, embeds=True)
