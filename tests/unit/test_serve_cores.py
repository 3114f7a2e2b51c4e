"""`xmemo serve` shares the cores among its workers' embedders, unless told otherwise."""

from __future__ import annotations

import os

from xmemo.cli.serve import share_cores


def test_each_worker_gets_its_share_of_the_cores(monkeypatch):
    monkeypatch.delenv("XMEMO_EMBEDDER_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    share_cores(4)
    assert os.environ["XMEMO_EMBEDDER_THREADS"] == "2"


def test_never_below_one_thread_and_one_process_is_left_alone(monkeypatch):
    monkeypatch.delenv("XMEMO_EMBEDDER_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    share_cores(1)
    assert "XMEMO_EMBEDDER_THREADS" not in os.environ
    share_cores(3)
    assert os.environ["XMEMO_EMBEDDER_THREADS"] == "1"


def test_an_explicit_setting_wins(monkeypatch):
    monkeypatch.setenv("XMEMO_EMBEDDER_THREADS", "2")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    share_cores(2)
    assert os.environ["XMEMO_EMBEDDER_THREADS"] == "2"
