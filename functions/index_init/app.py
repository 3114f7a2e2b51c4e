"""CloudFormation custom resource `Custom::OpenSearchIndex`: creates the memory index and
its alias during `sam deploy`, with the same code as `xmemo opensearch init`
(`xmemo.store.opensearch.manage`), from the same settings the API functions use.

Why a custom resource and not a post-deploy `make` target: the domain's access policy
admits only this stack's roles, so an operator's own credentials could not create the
index anyway; and a deployment that finishes is then a deployment that works.

- Create: `init` (create `<alias>-v<N>` and point the alias at it; idempotent).
- Update (the stack changed the alias, the dimension or the mapping version): `migrate`
  (a no-op when the alias already points at the current mapping version).
- Delete: nothing. Memories outlive the stack's custom resource; the domain's own
  deletion (or retention) decides their fate.

Every path answers CloudFormation (SUCCESS or FAILED), so a failure never leaves the
stack waiting for an hour. Nothing in the answer or the log carries memory content."""

from __future__ import annotations

import json
import logging
import urllib.request
from typing import Any, Callable

logger = logging.getLogger("xmemo.index_init")
logger.setLevel(logging.INFO)

Action = Callable[[str], dict[str, Any]]  # "init" | "migrate" -> a JSON-able report


def manage(action: str) -> dict[str, Any]:
    """Run `xmemo.store.opensearch.manage.<action>` against the configured store."""
    from xmemo.config import Settings
    from xmemo.store.opensearch import OpenSearchStore
    from xmemo.store.opensearch import manage as ops

    store = OpenSearchStore.from_settings(Settings())
    try:
        return getattr(ops, action)(store.client, store.plan)
    finally:
        store.close()


def send(url: str, body: dict[str, Any], timeout: float = 10.0) -> None:
    """PUT the response document to the pre-signed S3 URL CloudFormation gave us."""
    data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(data))})
    with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310 - https from CloudFormation
        reply.read()


def answer(event: dict[str, Any], context: Any, status: str, data: dict[str, Any], reason: str = "") -> dict[str, Any]:
    """The custom-resource response document."""
    physical = event.get("PhysicalResourceId") or f"{event['LogicalResourceId']}-{data.get('alias', 'index')}"
    log_stream = getattr(context, "log_stream_name", "") or ""
    return {
        "Status": status,
        "Reason": (reason or f"see CloudWatch log stream {log_stream}")[:1000],
        "PhysicalResourceId": physical,
        "StackId": event["StackId"],
        "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"],
        "Data": {k: str(v) for k, v in data.items() if k in ("action", "alias", "index")},
    }


def lambda_handler(event: dict[str, Any], context: Any, *, run: Action = manage,
                   put: Callable[[str, dict[str, Any]], None] = send) -> dict[str, Any]:
    kind = event.get("RequestType")
    try:
        if kind == "Delete":
            data: dict[str, Any] = {"action": "none"}
        elif kind in ("Create", "Update"):
            data = run("init" if kind == "Create" else "migrate")
        else:
            raise ValueError(f"unknown RequestType {kind!r}")
        body = answer(event, context, "SUCCESS", data)
    except Exception as exc:  # noqa: BLE001 - CloudFormation must always get an answer
        logger.exception("index %s failed", kind)
        body = answer(event, context, "FAILED", {}, f"{type(exc).__name__}: {str(exc)[:300]}")
    logger.info(json.dumps({"request": kind, "status": body["Status"], "data": body["Data"]}))
    put(event["ResponseURL"], body)
    return body
