"""functions/purge: the scheduled job deletes expired temporary memories and only those."""

from __future__ import annotations

from xmemo import api, tools
from xmemo.models import RecallInput, RememberInput

from tests.conftest import make_principal
from tests.infra.conftest import load_handler

SCHEDULED_EVENT = {"version": "0", "id": "e-1", "detail-type": "Scheduled Event", "source": "aws.events",
                   "account": "123456789012", "time": "2026-01-01T13:00:00Z", "region": "eu-west-1",
                   "resources": ["arn:aws:events:eu-west-1:123456789012:rule/purge"], "detail": {}}


class Context:
    function_name = "xmemo-purge"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:xmemo-purge"
    aws_request_id = "req-1"


def test_purge_deletes_expired_temporary_memories(services, clock):
    alice = make_principal("alice", scopes=("memory:read", "memory:write", "memory:temporary"))
    tools.remember(services, alice, RememberInput(content="scratch note for the current session", temporary=True, ttl_seconds=60))
    tools.remember(services, alice, RememberInput(content="a durable decision about the session store"))
    clock.advance(120)
    app = load_handler("purge")
    assert services.store.count() == 2
    with api.using_services(services):
        assert app.lambda_handler(SCHEDULED_EVENT, Context()) == {"purged": 1, "supersedes_finished": 0}
        assert app.lambda_handler(SCHEDULED_EVENT, Context()) == {"purged": 0, "supersedes_finished": 0}  # idempotent
    assert services.store.count() == 1
    left = tools.recall(services, alice, RecallInput(query="session", include_temporary=True))
    assert [hit.content for hit in left.results] == ["a durable decision about the session store"]
