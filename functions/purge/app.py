"""Scheduled job (EventBridge): delete expired temporary memories, and finish superseding
writes that a store failure cut off between their two documents (OpenSearch).

Reads never return expired memories whatever this job does (SPEC §3); the purge only
reclaims their space. It is idempotent, so a missed or repeated run is harmless. A store
failure raises: the asynchronous invocation is retried by Lambda and counted in the
function's `Errors` metric (alarmed)."""

from __future__ import annotations

from typing import Any

from xmemo import api, tools


@api.logger.inject_lambda_context(clear_state=True)
@api.tracer.capture_lambda_handler(capture_response=False)
@api.metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, int]:
    svc = api.services()
    purged = tools.purge_expired(svc)
    finished = tools.finish_supersedes(svc)
    api.add_count("ExpiredPurged", purged)
    api.add_count("SupersedesFinished", finished)
    api.logger.info("purged expired temporary memories", extra={"purged": purged, "supersedes_finished": finished})
    return {"purged": purged, "supersedes_finished": finished}
