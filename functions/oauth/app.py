"""Lambda handler of the MCP authorization server in front of Cognito: metadata, client
registration, /oauth2/authorize, Cognito's return to /oauth2/callback, /oauth2/token.
All of it lives in `xmemo.oauth`."""

from xmemo.oauth.aws import handle_event


def lambda_handler(event, context):
    return handle_event(event)
