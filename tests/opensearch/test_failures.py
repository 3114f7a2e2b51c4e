"""Store failures become a bounded-time `StoreUnavailable` (503), and retries never leave
a duplicate or a partial memory. Time bounds are generous (deadline + 2 s of slack for a
loaded 2-core machine): they check "bounded", not speed."""

from __future__ import annotations

import socket
import time

import pytest
from osmem_server import OsmemServer

from xmemo import tools
from xmemo.auth import principal_from_claims, read_filter
from xmemo.config import Settings
from xmemo.errors import StoreUnavailable
from xmemo.models import RecallInput, RememberInput
from xmemo.services import Services
from xmemo.store.opensearch import OpenSearchStore

pytestmark = pytest.mark.integration
SLACK = 2.0
ALICE = principal_from_claims({"sub": "alice", "scope": "xmemo/memory:read xmemo/memory:write"})


def services(url: str, clock, **kw) -> Services:
    opts = dict(opensearch_timeout_s=0.3, opensearch_retries=2, opensearch_deadline_s=1.5)
    opts.update(kw)
    settings = Settings(store="opensearch", opensearch_url=url, opensearch_knn=False, embedder="none", **opts)
    return Services(settings, OpenSearchStore.from_settings(settings), None, clock)


def remember(svc, content="The deploy key lives in the vault"):
    return tools.remember(svc, ALICE, RememberInput(content=content))


def timed(fn):
    start = time.monotonic()
    try:
        fn()
    except StoreUnavailable as exc:
        return time.monotonic() - start, exc
    raise AssertionError("expected StoreUnavailable")


def test_a_stopped_server_gives_a_bounded_503(clock):
    server = OsmemServer.start(japanese=False)
    svc = services(server.url, clock)
    remember(svc, "written while the server was up")
    server.close()
    elapsed, exc = timed(lambda: remember(svc))
    assert exc.code == "store_unavailable" and exc.retry_after >= 1
    assert elapsed < svc.settings.opensearch_deadline_s + SLACK
    elapsed, _ = timed(lambda: tools.recall(svc, ALICE, RecallInput(query="vault")))
    assert elapsed < svc.settings.opensearch_deadline_s + SLACK


def test_nothing_listening_gives_a_503(clock):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    elapsed, _ = timed(lambda: remember(services(f"http://127.0.0.1:{port}", clock)))
    assert elapsed < 1.5 + SLACK


def test_a_slow_server_times_out_within_the_deadline_and_a_retry_does_not_duplicate(proxy, clock):
    svc = services(proxy.url, clock)
    svc.store.count()  # index ready before the stall
    proxy.delay = 0.6  # every attempt exceeds the 0.3 s timeout
    elapsed, _ = timed(lambda: remember(svc))
    assert elapsed < svc.settings.opensearch_deadline_s + SLACK
    time.sleep(0.7)  # the stalled creates reach the server after the client gave up
    proxy.delay = 0
    again = remember(svc)  # the client's retry
    assert svc.store.count() == 1
    hits = tools.recall(svc, ALICE, RecallInput(query="deploy key vault")).results
    assert [h.reference for h in hits] == [again.memory.reference]


@pytest.mark.parametrize("status", [429, 503])
def test_transient_429_and_503_are_retried(proxy, clock, status):
    svc = services(proxy.url, clock)
    svc.store.count()
    proxy.fail(status, 2)  # two failures, retries=2: the third attempt succeeds
    result = remember(svc)
    assert not result.duplicate and svc.store.count() == 1


@pytest.mark.parametrize("status", [429, 503])
def test_persistent_429_and_503_give_a_503_and_write_nothing(proxy, clock, status):
    svc = services(proxy.url, clock)
    svc.store.count()
    proxy.fail(status, 100)
    elapsed, _ = timed(lambda: remember(svc))
    assert elapsed < svc.settings.opensearch_deadline_s + SLACK
    proxy.fail(status, 0)
    assert svc.store.count() == 0


def test_a_lost_response_after_the_write_landed_is_not_a_duplicate(proxy, clock):
    svc = services(proxy.url, clock, opensearch_timeout_s=0.5, opensearch_deadline_s=4.0)
    svc.store.count()
    proxy.lose_responses, proxy.stall = 1, 1.0  # the create lands; its answer comes too late
    result = remember(svc)
    creates = [p for m, p, _ in proxy.seen if m == "PUT" and "/_create/" in p]
    assert proxy.lose_responses == 0 and len(creates) == 2 and creates[0] == creates[1]  # retried on the same slot
    assert not result.duplicate
    assert svc.store.count() == 1
    rf = read_filter(ALICE, clock())
    assert svc.store.get(result.memory.reference, rf) == result.memory.model_copy(update={"embedding": None})


def test_bad_requests_are_not_retried_as_unavailability(proxy, clock):
    svc = services(proxy.url, clock)
    svc.store.count()
    proxy.fail(400, 1)
    with pytest.raises(Exception) as info:
        remember(svc)
    assert not isinstance(info.value, StoreUnavailable)
    assert sum(1 for m, p, _ in proxy.seen if m == "PUT" and "/_create/" in p) == 1


def test_a_supersede_cut_off_by_a_failure_is_finished_by_the_sweep(proxy, clock):
    """A supersede is two documents on OpenSearch: if the mark on the old memory fails
    after the new one is stored, the call answers 503 and both are live. The purge's
    sweep (`tools.finish_supersedes`) finishes it when the client does not retry."""
    from xmemo.models import ListInput

    svc = services(proxy.url, clock)
    old = remember(svc, "Use REST for the agent API")
    proxy.fail(503, 100, only="/_update/")  # only the mark fails
    with pytest.raises(StoreUnavailable):
        tools.remember(svc, ALICE, RememberInput(content="Use MCP for the agent API", supersedes=old.memory.reference))
    proxy.fail(None, 0)

    def live():
        return sorted(m.content for m in tools.list_memories(svc, ALICE, ListInput()).memories)

    assert live() == ["Use MCP for the agent API", "Use REST for the agent API"]  # the cut-off state
    assert tools.finish_supersedes(svc) == 1
    assert live() == ["Use MCP for the agent API"]
    assert tools.finish_supersedes(svc) == 0  # idempotent
