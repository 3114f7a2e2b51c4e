"""Lambda handler of the MCP endpoint: `POST /mcp` (public profile), `POST /mcp/full`
(full surface) and the RFC 9728 resource metadata. JSON-RPC in, the same tool functions
as the REST handlers, JSON out; all the protocol lives in `xmemo.mcp`."""

from xmemo.mcp.apigw import handle_event


def lambda_handler(event, context):
    return handle_event(event)
