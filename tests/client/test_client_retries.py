"""Retries over real sockets: a proxy in front of the local gateway answers 503 or 429
with `Retry-After` and then passes through, or loses an answer after the write landed."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from xmemo.client import (
    AsyncXMemo,
    InvalidRequestError,
    RateLimitedError,
    Retry,
    StoreUnavailableError,
    TransportError,
    XMemo,
)

pytestmark = pytest.mark.e2e


def _writes(proxy) -> int:
    return sum(1 for method, path, _ in proxy.seen if method == "POST" and path == "/v1/memories")


@pytest.mark.parametrize("status,error", [(503, StoreUnavailableError), (429, RateLimitedError)])
def test_refusals_with_retry_after_are_waited_out_and_nothing_is_doubled(gateway, proxy, user, status, error):
    proxy.fail_headers = {"Retry-After": "1"}
    proxy.fail(status, times=2, only="/v1/memories")
    with XMemo(proxy.url, token=gateway.token(user)) as m:
        stored = m.remember("retried through a refusing proxy", bucket="retry")
        plan = m.last_plan
    assert plan.tries == 3 and _writes(proxy) == 3
    assert len(plan.waits) == 2 and all(1 <= w <= 1.2 for w in plan.waits)  # Retry-After, plus at most 20% jitter
    assert not stored.duplicate
    with XMemo(gateway.url, token=gateway.token(user)) as direct:
        assert [x.reference for x in direct.list(bucket="retry")] == [stored.memory.reference]


def test_without_retry_after_backoff_is_jittered_and_grows(gateway, proxy, user):
    proxy.fail(503, times=4, only="/v1/recall")
    with XMemo(proxy.url, token=gateway.token(user), retry=Retry(backoff=0.05, max_backoff=0.2)) as m:
        m.recall("anything at all")
        waits = m.last_plan.waits
    assert len(waits) == 4
    for attempt, wait in enumerate(waits):
        ceiling = min(0.2, 0.05 * 2**attempt)
        assert ceiling / 2 <= wait <= ceiling


def test_the_deadline_bounds_the_whole_call(gateway, proxy, user):
    proxy.fail_headers = {"Retry-After": "1"}
    proxy.fail(503, times=1000, only="/v1/recall")
    with XMemo(proxy.url, token=gateway.token(user), retry=Retry(deadline=4)) as m:
        with pytest.raises(StoreUnavailableError) as e:
            m.recall("anything at all")
        plan = m.last_plan
    assert e.value.retry_after == 1 and e.value.status == 503
    assert 2 <= plan.tries <= 4 and len(plan.waits) == plan.tries - 1 and sum(plan.waits) <= 4


def test_other_4xx_are_never_retried(gateway, proxy, user):
    proxy.fail_headers = {"Retry-After": "1"}
    proxy.fail(400, times=5, only="/v1/recall")
    with XMemo(proxy.url, token=gateway.token(user)) as m:
        with pytest.raises(InvalidRequestError):
            m.recall("anything at all")
        assert m.last_plan.tries == 1 and m.last_plan.waits == []
    assert sum(1 for _, path, _ in proxy.seen if path == "/v1/recall") == 1


def test_a_lost_answer_to_remember_is_retried_and_finds_the_same_memory(gateway, proxy, user):
    """The write lands, its answer does not arrive in time: the retry answers the same
    reference (`duplicate`), and exactly one memory exists."""
    proxy.lose_responses, proxy.stall = 1, 8.0
    with XMemo(proxy.url, token=gateway.token(user), timeout=4.0) as m:
        stored = m.remember("a write whose first answer was lost", bucket="lost")
        assert m.last_plan.tries == 2
    assert stored.duplicate  # the first attempt stored it
    with XMemo(gateway.url, token=gateway.token(user)) as direct:
        assert [x.reference for x in direct.list(bucket="lost")] == [stored.memory.reference]


def test_a_delete_whose_answer_is_late_is_not_repeated(gateway, proxy, user):
    with XMemo(gateway.url, token=gateway.token(user)) as direct:
        ref = direct.remember("to be deleted through a slow proxy").memory.reference
    proxy.delay = 1.5
    with XMemo(proxy.url, token=gateway.token(user), timeout=0.5) as m:
        with pytest.raises(TransportError) as e:
            m.forget(ref)
        assert isinstance(e.value.__cause__, httpx.ReadTimeout)
        assert m.last_plan.tries == 1
    assert sum(1 for method, _, _ in proxy.seen if method == "DELETE") == 1


def test_a_server_that_never_answers_ends_in_transport_error_within_the_deadline(user):
    with XMemo("http://127.0.0.1:9", token="not-even-a-jwt", retry=Retry(deadline=1, backoff=0.1)) as m:
        with pytest.raises(TransportError) as e:
            m.recall("anything")
        assert isinstance(e.value.__cause__, httpx.ConnectError)
        assert m.last_plan.tries >= 2 and sum(m.last_plan.waits) <= 1


def test_async_client_retries_the_same_way(gateway, proxy, user):
    proxy.fail_headers = {"Retry-After": "1"}
    proxy.fail(503, times=1, only="/v1/memories")

    async def run():
        async with AsyncXMemo(proxy.url, token=gateway.token(user)) as m:
            stored = await m.remember("async write through a refusing proxy", bucket="aretry")
            assert m.last_plan.tries == 2 and 1 <= m.last_plan.waits[0] <= 1.2
            return stored

    stored = asyncio.run(run())
    with XMemo(gateway.url, token=gateway.token(user)) as direct:
        assert [x.reference for x in direct.list(bucket="aretry")] == [stored.memory.reference]
