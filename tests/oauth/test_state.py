"""The state-store contract, on SQLite and on DynamoDB (moto's server over HTTP): items
expire, `take` hands an item to exactly one caller, counters start a new window."""

from __future__ import annotations

import threading

from xmemo.oauth.state import digest


def test_put_get_and_expiry(store_and_clock):
    store, clock = store_and_clock
    store.put("code", "k1", {"a": 1, "b": ["x"]}, ttl=60)
    store.put("client", "forever", {"c": 2}, ttl=None)
    assert store.get("code", "k1") == {"a": 1, "b": ["x"]}
    assert store.get("code", "other") is None and store.get("client", "k1") is None
    clock.now += 61
    assert store.get("code", "k1") is None  # expired even where deletion is lazy (DynamoDB TTL)
    assert store.take("code", "k1") is None
    assert store.get("client", "forever") == {"c": 2}


def test_take_is_single_use_under_concurrency(store_and_clock):
    store, _ = store_and_clock
    store.put("code", "once", {"v": 1}, ttl=60)
    got: list[object] = []
    barrier = threading.Barrier(6)

    def taker():
        barrier.wait()
        got.append(store.take("code", "once"))

    threads = [threading.Thread(target=taker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [g for g in got if g is not None] == [{"v": 1}]
    assert store.get("code", "once") is None


def test_counters_count_within_a_window(store_and_clock):
    store, clock = store_and_clock
    assert [store.count("rate", "ip", ttl=100) for _ in range(3)] == [1, 2, 3]
    assert store.count("rate", "other", ttl=100) == 1
    clock.now += 101
    assert store.count("rate", "ip", ttl=100) == 1  # a new window


def test_secrets_are_kept_as_digests():
    assert digest("code-123") == digest("code-123") != digest("code-124")
    assert "code-123" not in digest("code-123") and len(digest("x")) == 64
