"""API Gateway REST proxy events, shaped as a Cognito user-pool authorizer delivers them,
and a Lambda context: what the local gateway and `xmemo invoke` hand to the handlers.

API Gateway passes the verified token's claims as strings: `scope` space-separated,
`exp`/`iat` as Java-style dates, lists such as `cognito:groups` flattened to `[a b]`."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping
from urllib.parse import parse_qs

DATE_CLAIMS = ("exp", "iat")
STAGE = "prod"


def claims_as_strings(payload: Mapping[str, Any]) -> dict[str, str]:
    """JWT payload → the string-only claims map of `requestContext.authorizer.claims`."""
    out: dict[str, str] = {}
    for key, value in payload.items():
        if key in DATE_CLAIMS and isinstance(value, (int, float)):
            out[key] = datetime.fromtimestamp(value, tz=timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
        elif isinstance(value, (list, tuple)):
            out[key] = "[" + " ".join(str(v) for v in value) + "]"
        elif isinstance(value, bool):
            out[key] = "true" if value else "false"
        else:
            out[key] = str(value)
    return out


def rest_event(
    method: str,
    resource: str,
    path: str,
    *,
    path_parameters: Mapping[str, str] | None = None,
    query: str = "",
    headers: Mapping[str, str] | None = None,
    body: str | None = None,
    claims: Mapping[str, str] | None = None,
    source_ip: str = "127.0.0.1",
    request_id: str | None = None,
) -> dict[str, Any]:
    """A REST API (v1) Lambda proxy event. `resource` is the template path
    (`/v1/memories/{reference}`), `path` the concrete one."""
    headers = dict(headers or {})
    multi_query = {k: v for k, v in parse_qs(query, keep_blank_values=True).items()} if query else {}
    now_ms = int(time.time() * 1000)
    request_id = request_id or str(uuid.uuid4())
    context: dict[str, Any] = {
        "resourceId": "local",
        "resourcePath": resource,
        "httpMethod": method,
        "extendedRequestId": request_id,
        "requestTime": datetime.fromtimestamp(now_ms / 1000, tz=timezone.utc).strftime("%d/%b/%Y:%H:%M:%S +0000"),
        "path": f"/{STAGE}{path}",
        "accountId": "000000000000",
        "protocol": "HTTP/1.1",
        "stage": STAGE,
        "domainPrefix": "localhost",
        "requestTimeEpoch": now_ms,
        "requestId": request_id,
        "identity": {"sourceIp": source_ip, "userAgent": headers.get("User-Agent") or headers.get("user-agent")},
        "domainName": "localhost",
        "apiId": "local",
    }
    if claims is not None:
        context["authorizer"] = {"claims": dict(claims)}
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": headers or None,
        "multiValueHeaders": {k: [v] for k, v in headers.items()} or None,
        "queryStringParameters": {k: v[-1] for k, v in multi_query.items()} or None,
        "multiValueQueryStringParameters": multi_query or None,
        "pathParameters": dict(path_parameters) if path_parameters else None,
        "stageVariables": None,
        "requestContext": context,
        "body": body,
        "isBase64Encoded": False,
    }


@dataclass
class LambdaContext:
    """The attributes Powertools and handlers read from the Lambda context object."""

    function_name: str
    memory_limit_in_mb: int = 512
    timeout_seconds: int = 15
    aws_request_id: str = ""

    def __post_init__(self) -> None:
        self.aws_request_id = self.aws_request_id or str(uuid.uuid4())
        self.invoked_function_arn = f"arn:aws:lambda:local:000000000000:function:{self.function_name}"
        self.function_version = "$LATEST"
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + self.timeout_seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))
