"""CloudFormation custom resource `Custom::OpenSearchIndex`: creates the memory index and
its alias during `sam deploy`, with the same code as `xmemo opensearch init`
(`xmemo.store.opensearch.manage`), from the same settings the API functions use.

Why a custom resource and not a post-deploy `make` target: the domain's access policy
admits only this stack's roles, so an operator's own credentials could not create the
index anyway; and a deployment that finishes is then a deployment that works.

- Create: `init` (create `<alias>-v<N>` and point the alias at it; idempotent).
- Update (the stack changed the alias, the dimension or the mapping version): `migrate`
  (a no-op when the alias already points at the current mapping version).
- Create and Update then `configure` the managed domain: the live index gets the
  profile's replica count (fixed at creation otherwise: a dev stack moved to production
  would keep zero replicas) and slow-log thresholds, and the S3 snapshot repository is
  registered (it needs a SigV4 request from a role allowed to pass the snapshot role, which
  is this function's).
- Delete: nothing. Memories outlive the stack's custom resource; the domain's own
  deletion (or retention) decides their fate.

Every path answers CloudFormation (SUCCESS or FAILED), also when the work outlasts the
function (a long reindex): it answers FAILED `ANSWER_MARGIN_S` before Lambda would stop it,
and the template's ServiceTimeout bounds the wait for an answer lost anyway. Nothing in the
answer or the log carries memory content."""

from __future__ import annotations

import json
import logging
import threading
import urllib.request
from typing import Any, Callable, Mapping

logger = logging.getLogger("xmemo.index_init")
logger.setLevel(logging.INFO)

# ("init" | "migrate", the resource's properties) -> a JSON-able report
Action = Callable[[str, Mapping[str, Any]], dict[str, Any]]

ANSWER_MARGIN_S = 30.0  # answer CloudFormation this long before Lambda stops the function
# Slow-log thresholds of the memory index (the domain publishes SEARCH/INDEX_SLOW_LOGS): a
# recall is slow past a second; anything past these is worth a log line.
SLOW_LOGS = {
    "search.slowlog.threshold.query.warn": "2s",
    "search.slowlog.threshold.fetch.warn": "1s",
    "indexing.slowlog.threshold.index.warn": "2s",
}


def configure(client: Any, alias: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """Put the profile's replicas and the slow-log thresholds on the live index (the alias's
    indices), and register the snapshot repository when the stack made one."""
    settings: dict[str, Any] = dict(SLOW_LOGS)
    if properties.get("Replicas") not in (None, ""):
        settings["number_of_replicas"] = int(properties["Replicas"])
    client.indices.put_settings(index=alias, body={"index": settings})
    report: dict[str, Any] = {"replicas": settings.get("number_of_replicas", "unchanged")}
    repo = properties.get("SnapshotRepository")
    if repo:
        client.snapshot.create_repository(repository=repo["Name"], body={
            "type": "s3",
            "settings": {"bucket": repo["Bucket"], "region": repo["Region"], "role_arn": repo["RoleArn"]},
        })
        report["repository"] = repo["Name"]
    return report


def manage(action: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """Run `xmemo.store.opensearch.manage.<action>` against the configured store, then
    `configure` it (not on Serverless, which manages replicas and has no repositories)."""
    from xmemo.config import Settings
    from xmemo.store.opensearch import OpenSearchStore
    from xmemo.store.opensearch import manage as ops

    store = OpenSearchStore.from_settings(Settings())
    try:
        report = getattr(ops, action)(store.client, store.plan)
        if not store.plan.serverless:
            report.update(configure(store.client, store.plan.alias, properties))
        return report
    finally:
        store.close()


def within(seconds: float, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`work()`, or TimeoutError after `seconds` (the work goes on in a daemon thread: a
    reindex continues in the domain, and Lambda freezes the thread with the function)."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result["error"] = exc

    worker = threading.Thread(target=target, daemon=True, name="index-init")
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise TimeoutError(f"still running after {seconds:.0f} s; a reindex goes on in the domain: "
                           "retry the stack update when it is done, or run `xmemo opensearch migrate`")
    if "error" in result:
        raise result["error"]
    return result["value"]


def budget(context: Any, margin_s: float) -> float:
    """Seconds the work may take: the function's remaining time less the margin."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    return (remaining() / 1000.0 if remaining else 900.0) - margin_s


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
        "Data": {k: str(v) for k, v in data.items() if k in ("action", "alias", "index", "replicas", "repository")},
    }


def lambda_handler(event: dict[str, Any], context: Any, *, run: Action = manage,
                   put: Callable[[str, dict[str, Any]], None] = send,
                   margin_s: float = ANSWER_MARGIN_S) -> dict[str, Any]:
    kind = event.get("RequestType")
    properties = event.get("ResourceProperties") or {}
    try:
        if kind == "Delete":
            data: dict[str, Any] = {"action": "none"}
        elif kind in ("Create", "Update"):
            action = "init" if kind == "Create" else "migrate"
            data = within(budget(context, margin_s), lambda: run(action, properties))
        else:
            raise ValueError(f"unknown RequestType {kind!r}")
        body = answer(event, context, "SUCCESS", data)
    except Exception as exc:  # noqa: BLE001 - CloudFormation must always get an answer
        logger.exception("index %s failed", kind)
        body = answer(event, context, "FAILED", {}, f"{type(exc).__name__}: {str(exc)[:300]}")
    logger.info(json.dumps({"request": kind, "status": body["Status"], "data": body["Data"]}))
    put(event["ResponseURL"], body)
    return body
