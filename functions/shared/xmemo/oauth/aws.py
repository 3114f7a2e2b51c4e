"""The authorization server as a Lambda behind API Gateway: state in DynamoDB, people
sent to Cognito's hosted login with the stack's interactive app client. Its issuer is
`XMEMO_PUBLIC_BASE_URL` (the same URL the MCP resource metadata names), which must be
set: an issuer rebuilt from each request's Host could be steered by the caller."""

from __future__ import annotations

import base64
import json
from functools import lru_cache
from typing import Any, Mapping
from urllib.parse import urlencode

from ..config import Settings
from .clients import Clients
from .cognito import CognitoUpstream
from .dynamo import DynamoState
from .facade import Facade
from .fetch import fetch
from .metadata import Endpoints, xmemo_scopes
from .server import AuthorizationServer, Policy


def build_facade(settings: Settings, dynamodb: Any) -> Facade:
    base = str(settings.public_base_url).rstrip("/")
    endpoints = Endpoints(base)
    scopes = xmemo_scopes(settings.resource_server)
    store = DynamoState(str(settings.oauth_table), dynamodb)
    upstream = CognitoUpstream(str(settings.cognito_domain), str(settings.cognito_client_id), endpoints.callback)
    server = AuthorizationServer(endpoints, [f"{base}/mcp", f"{base}/mcp/full"], scopes, store,
                                 Clients(store, scopes, fetch), upstream,
                                 Policy(refresh_ttl=settings.oauth_refresh_ttl_s,
                                        registrations_per_window=settings.oauth_registrations_per_hour))
    return Facade(server, callback=upstream.callback_grant)


@lru_cache(maxsize=1)
def _default_facade() -> Facade | None:
    settings = Settings()
    if not (settings.public_base_url and settings.oauth_table and settings.cognito_domain and settings.cognito_client_id):
        return None
    import boto3

    return build_facade(settings, boto3.client("dynamodb"))


def handle_event(event: Mapping[str, Any], facade: Facade | None = None) -> dict[str, Any]:
    """The proxy response for one API Gateway event (tests pass their own façade)."""
    facade = facade or _default_facade()
    if facade is None:
        body = {"error": "temporarily_unavailable", "error_description": "the authorization server is not configured "
                "(PublicBaseUrl, the OAuth table and the Cognito interactive client are required)"}
        return {"statusCode": 404, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}
    raw = event.get("body") or ""
    body = base64.b64decode(raw) if event.get("isBase64Encoded") else raw.encode("utf-8")
    multi = event.get("multiValueQueryStringParameters") or {}
    single = event.get("queryStringParameters") or {}
    query = urlencode([(k, v) for k, values in multi.items() for v in values] if multi else list(single.items()))
    source = str(((event.get("requestContext") or {}).get("identity") or {}).get("sourceIp") or "unknown")
    answer = facade.handle(str(event.get("httpMethod", "")).upper(), str(event.get("resource") or event.get("path")),
                           query, {str(k): str(v) for k, v in (event.get("headers") or {}).items() if v is not None},
                           body, source)
    return {"statusCode": answer.status, "headers": answer.headers, "body": answer.body.decode("utf-8"), "isBase64Encoded": False}
