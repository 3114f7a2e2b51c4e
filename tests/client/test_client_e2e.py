"""`XMemo` and `AsyncXMemo` against the local gateway over real HTTP with real tokens:
every method returns the service's own result models, and every SPEC §6 error arrives as
its typed exception carrying status, code, message and details."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from xmemo import errors as domain
from xmemo.client import (
    APIError,
    AsyncXMemo,
    CapturePolicyError,
    InsufficientScopeError,
    InvalidRequestError,
    NotFoundError,
    OutOfBoundsError,
    Retry,
    StoreUnavailableError,
    TeamMismatchError,
    UnauthorizedError,
    XMemo,
)
from xmemo.models import Memory
from xmemo.results import ContextResult, ForgetResult, ListResult, MemoryResult, RecallResult, RememberResult, SearchResult
from xmemo.status import STATUS

pytestmark = pytest.mark.e2e


def test_every_method_returns_the_service_result_models(gateway, user):
    with XMemo(gateway.url, token=gateway.token(user, teams=["acme"])) as m:
        stored = m.remember("Releases ship on Tuesdays after the freeze review.", type="decision", location="ops/releases", tags=["ops"], team="acme", project="orion")
        assert isinstance(stored, RememberResult) and not stored.duplicate
        ref = stored.memory.reference
        assert stored.memory.boundary == "team:acme/project:orion" and stored.memory.location == "ops/releases"
        again = m.remember("Releases ship on Tuesdays after the freeze review.", type="decision", tags=["ops"], team="acme", project="orion")
        assert again.duplicate and again.memory.reference == ref

        recalled = m.recall("when do releases ship", limit=3, team="acme")
        assert isinstance(recalled, RecallResult) and [h.reference for h in recalled.results] == [ref]
        searched = m.search("freeze review", project="orion")
        assert isinstance(searched, SearchResult) and searched.results[0].reference == ref
        assert m.search("freeze review", project="other").results == []
        pack = m.context("release schedule", max_items=2, max_tokens=200)
        assert isinstance(pack, ContextResult) and [i.reference for i in pack.items] == [ref]
        assert pack.budget.used_tokens <= 200 and pack.context_text.startswith("[1] ")
        got = m.get(ref)
        assert isinstance(got, MemoryResult) and got.memory.content.startswith("Releases ship")

        gone = m.forget(ref)
        assert isinstance(gone, ForgetResult) and gone.deleted == 1
        with pytest.raises(NotFoundError):
            m.get(ref)


def test_list_follows_cursors_newest_first(gateway, user):
    with XMemo(gateway.url, token=gateway.token(user)) as m:
        refs = [m.remember(f"paged note number {i}", bucket="paged").memory.reference for i in range(7)]
        m.remember("a note in another bucket", bucket="elsewhere")
        page = m.list_page(limit=3, bucket="paged")
        assert isinstance(page, ListResult) and len(page.memories) == 3 and page.next_cursor
        listed = list(m.list(page_size=3, bucket="paged"))
        assert all(isinstance(x, Memory) for x in listed)
        assert [x.reference for x in listed] == refs[::-1]
        assert m.forget(bucket="paged").deleted == 7
        assert list(m.list(bucket="paged")) == []
        assert [x.bucket for x in m.list()] == ["elsewhere"]


def test_async_client_does_the_same(gateway, user):
    async def run():
        async with AsyncXMemo(gateway.url, token=gateway.token(user)) as m:
            written = await asyncio.gather(*(m.remember(f"async note {i} about kestrels", bucket="birds") for i in range(5)))
            refs = {w.memory.reference for w in written}
            assert (await m.recall("kestrels")).results
            assert (await m.search("kestrels", bucket="birds", limit=10)).results
            assert (await m.context("kestrels")).items
            assert (await m.get(next(iter(refs)))).memory.bucket == "birds"
            listed = [x.reference async for x in m.list(page_size=2, bucket="birds")]
            assert set(listed) == refs and len(listed) == 5
            assert (await m.forget(bucket="birds")).deleted == 5
            with pytest.raises(NotFoundError):
                await m.forget(next(iter(refs)))

    asyncio.run(run())


# ---------------------------------------------------------------------------------------
# SPEC §6: every error mapped to its exception
def _check(exc: APIError, cls: type, domain_cls: type, code: str) -> None:
    assert type(exc) is cls and isinstance(exc, domain_cls)
    assert exc.code == code == domain_cls.code and exc.status == STATUS[code]
    assert exc.message and str(exc).startswith(f"{exc.status} {code}: ")


def test_every_spec_error_arrives_as_its_exception(gateway, strict_gateway, user):
    seen: set[str] = set()
    with XMemo(gateway.url, token=gateway.token(user, teams=["acme"])) as m:
        with pytest.raises(InvalidRequestError) as e:
            m.recall("   ")
        _check(e.value, InvalidRequestError, domain.InvalidRequest, "invalid_request")
        assert e.value.details and e.value.details[0]["field"] == "query"
        with pytest.raises(OutOfBoundsError) as e:
            m.recall("anything", limit=99)
        _check(e.value, OutOfBoundsError, domain.OutOfBounds, "out_of_bounds")
        assert e.value.details[0]["field"] == "limit"
        with pytest.raises(TeamMismatchError) as e:
            m.recall("anything", team="not-mine")
        _check(e.value, TeamMismatchError, domain.TeamMismatch, "team_mismatch")
        assert e.value.details == {"team": "not-mine"}
        with pytest.raises(NotFoundError) as e:
            m.get("mem_01ZZZZZZZZZZZZZZZZZZZZZZZZ")
        _check(e.value, NotFoundError, domain.NotFound, "not_found")
        seen |= {"invalid_request", "out_of_bounds", "team_mismatch", "not_found"}
    with XMemo(gateway.url, token=gateway.token(user, "memory:read")) as reader:
        with pytest.raises(InsufficientScopeError) as e:
            reader.remember("a reader cannot write")
        _check(e.value, InsufficientScopeError, domain.InsufficientScope, "insufficient_scope")
        assert e.value.scope == "xmemo/memory:write"
        with pytest.raises(InsufficientScopeError):
            reader.recall("temporary things", include_temporary=True)
        seen.add("insufficient_scope")
    expired = gateway.token(user, ttl=60, now=1_700_000_000)
    with XMemo(gateway.url, token=expired) as stale:
        with pytest.raises(UnauthorizedError) as e:
            stale.recall("anything")
        _check(e.value, UnauthorizedError, domain.Unauthorized, "unauthorized")
        assert stale.last_plan.tries == 1  # a token handed in as is cannot be renewed
        seen.add("unauthorized")
    with XMemo(strict_gateway.url, token=strict_gateway.token(user)) as m:
        with pytest.raises(CapturePolicyError) as e:
            m.remember("the deploy key is AKIA2E0A8F3B6C9D1E4F, keep it safe")
        _check(e.value, CapturePolicyError, domain.CapturePolicyRefused, "capture_policy")
        seen.add("capture_policy")
        m.remember("the store exists before it is locked")
        with locked(strict_gateway, seconds=5):
            with pytest.raises(StoreUnavailableError) as e:
                XMemo(strict_gateway.url, token=strict_gateway.token(user), retry=Retry(deadline=0)).remember("written while the store is locked")
        _check(e.value, StoreUnavailableError, domain.StoreUnavailable, "store_unavailable")
        assert e.value.retry_after == e.value.details["retry_after_seconds"] > 0
        seen.add("store_unavailable")
        assert [x.content for x in m.list()] == ["the store exists before it is locked"]  # nothing half-written
    assert seen == set(STATUS), "a SPEC §6 code without its client test"


def test_a_real_503_is_retried_until_the_store_answers(strict_gateway, user):
    """The embedded store held by another process: the gateway answers 503 with
    Retry-After; the client waits as told and the write lands exactly once."""
    with XMemo(strict_gateway.url, token=strict_gateway.token(user), retry=Retry(deadline=30)) as m:
        m.remember("the store exists before it is locked")
        with locked(strict_gateway, seconds=1.5) as locker:
            stored = m.remember("written through a locked store")
            locker.wait(timeout=30)
        plan = m.last_plan
        assert plan.tries >= 2 and all(w >= 2 for w in plan.waits), (plan.tries, plan.waits)  # the gateway's Retry-After: 2
        assert not stored.duplicate
        assert [x.content for x in m.list()].count("written through a locked store") == 1


class locked:
    """Another process holds the SQLite write lock of `gw`'s store for `seconds`."""

    LOCKER = (
        "import sqlite3, sys, time\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)\n"
        "conn.execute('BEGIN IMMEDIATE'); print('locked', flush=True); time.sleep(float(sys.argv[2])); conn.execute('ROLLBACK')\n"
    )

    def __init__(self, gw, seconds: float):
        self.db, self.seconds = gw.settings.data_dir / "xmemo.sqlite3", seconds

    def __enter__(self) -> subprocess.Popen:
        self.proc = subprocess.Popen([sys.executable, "-c", self.LOCKER, str(self.db), str(self.seconds)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "locked"
        return self.proc

    def __exit__(self, *exc) -> None:
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
