"""Scheduled job (EventBridge): delete expired temporary memories.

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
    purged = tools.purge_expired(api.services())
    api.add_count("ExpiredPurged", purged)
    api.logger.info("purged expired temporary memories", extra={"purged": purged})
    return {"purged": purged}
