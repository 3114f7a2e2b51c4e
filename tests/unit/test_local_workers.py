"""The gateway's worker processes: each invocation runs in the next idle worker, in its own
process; a handler that raises costs only its call, a worker that dies is replaced, and
closing the pool ends every worker. Real spawned processes running a real handler file."""

from __future__ import annotations

import os
import signal
import textwrap
import threading
import time
from pathlib import Path

import pytest

from xmemo.local.functions import FunctionMissing
from xmemo.local.template import Route
from xmemo.local.workers import HandlerCrashed, WorkerPool

HANDLER = textwrap.dedent(
    """
    import os, time

    def handler(event, context):
        action = event.get("action")
        if action == "sleep":
            time.sleep(event["seconds"])
        elif action == "raise":
            raise ValueError("boom")
        elif action == "die":
            os._exit(3)
        return {"statusCode": 200, "pid": os.getpid(), "echo": event.get("echo")}
    """
)


def route(code: Path, function: str = "TestFunction", timeout: int = 3) -> Route:
    return Route("POST", "/t", function, code, "app.handler", (), False, timeout, 128)


@pytest.fixture
def code(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(HANDLER)
    return tmp_path


@pytest.fixture
def pool(code):
    p = WorkerPool([route(code), route(code.parent / "absent", "MissingFunction")], size=2)
    yield p
    p.close()


def test_an_invocation_runs_in_a_worker_process_and_returns_its_answer(pool, code):
    answer = pool.invoke(route(code), {"echo": "hello"})
    assert answer["echo"] == "hello" and answer["pid"] != os.getpid()


def test_calls_in_flight_together_run_on_different_workers(pool, code):
    assert len(two_calls_at_once(pool, code)) == 2, "the second call waited for the busy worker while the other idled"


def test_a_raising_handler_costs_only_its_call(pool, code):
    first = pool.invoke(route(code), {})["pid"]
    with pytest.raises(HandlerCrashed, match="ValueError"):
        pool.invoke(route(code), {"action": "raise"})
    seen = {pool.invoke(route(code), {})["pid"] for _ in range(4)}
    assert first in seen  # the same processes go on serving


def test_a_dead_worker_is_replaced(pool, code):
    with pytest.raises(HandlerCrashed, match="died"):
        pool.invoke(route(code), {"action": "die"})
    assert len(two_calls_at_once(pool, code)) == 2  # two workers again


def test_a_call_past_the_function_timeout_is_stopped_and_its_worker_replaced(pool, code):
    with pytest.raises(HandlerCrashed, match="timed out after 1 seconds"):
        pool.invoke(route(code, timeout=1), {"action": "sleep", "seconds": 30})
    assert len(two_calls_at_once(pool, code)) == 2  # two workers again


def two_calls_at_once(pool, code) -> set[int]:
    """The pids that served two calls in flight together (each waits for an idle worker)."""
    answers = []

    def call():
        answers.append(pool.invoke(route(code), {"action": "sleep", "seconds": 0.3}))

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(answers) == 2
    return {a["pid"] for a in answers}


def test_a_missing_handler_file_is_reported_as_such(pool, code):
    with pytest.raises(FunctionMissing, match="MissingFunction"):
        pool.invoke(route(code.parent / "absent", "MissingFunction"), {})
    assert pool.invoke(route(code), {"echo": 1})["echo"] == 1


def test_closing_the_pool_ends_every_worker(code):
    p = WorkerPool([route(code)], size=2)
    processes = [w.process for w in p._all]
    p.close()
    assert all(not proc.is_alive() for proc in processes)


def test_ctrl_c_on_the_process_group_costs_no_call_in_flight(pool, code):
    """A terminal's Ctrl-C reaches every process of the group. The gateway stops its
    workers itself (by closing their pipes), so a worker ignores SIGINT: the call it is
    running still answers and the worker goes on serving."""
    pids = two_calls_at_once(pool, code)
    answers: list[dict] = []
    errors: list[BaseException] = []

    def slow_call():
        try:
            answers.append(pool.invoke(route(code), {"action": "sleep", "seconds": 1.0, "echo": "finished"}))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    caller = threading.Thread(target=slow_call)
    caller.start()
    time.sleep(0.3)  # the call is running in one of the workers
    for pid in pids:
        os.kill(pid, signal.SIGINT)
    caller.join(timeout=30)
    assert not errors, f"the call in flight was cut short: {errors[0]!r}"
    assert answers and answers[0]["echo"] == "finished"
    assert two_calls_at_once(pool, code) == pids, "the same two workers go on serving"
