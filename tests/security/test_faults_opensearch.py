"""Faults of the OpenSearch store under concurrent load, end to end through the gateway:
`xmemo serve` on `XMEMO_STORE=opensearch` (6 worker processes, as several Lambda
instances), osmem-server behind the fault proxy of tests/faultproxy.py, 12 clients (REST
and MCP `tools/call remember` writers, REST readers, some writes superseding earlier
memories). Mid-run, for 2.5 s, the store is

- stopped: new connections refused, open ones cut (a write in flight may land there
  while its answer is lost);
- slow: every request stalled 0.6–1.0 s, beyond the 0.5 s attempt timeout (every attempt
  times out and the write is refused, but its create lands afterwards);
- throttling: 70 % of requests answered 429 or 503, the rest served.

Every call ends within the Lambda timeout with an answer or `503 store_unavailable`
(SPEC §6 body and `Retry-After`; over MCP the `Error 503 store_unavailable: …` tool
result): never a 500 or 502, never a hang. After recovery, read straight from the index
(a bare `match_all`, not the store's read code):

- every acknowledged write is there exactly once, under the reference it was answered with;
- a refused write is absent, or (its create landed, its answer was lost) there once and
  whole; the client's retry of the same content dedupes to it (200 `duplicate`, the
  stored reference) or stores it (201); then every write is there exactly once;
- every stored document is a whole memory (it round-trips through the document mapping,
  sits on its duplicate slot id); after the retries every supersede is complete (the
  superseded memory names its successor) and no memory names a successor that is not
  there. Before the retry a refused superseding write may have landed while the old
  memory is not marked yet: two documents, no transaction, so both are live until the
  retry finishes it (docs/opensearch.md); the run summary counts these.

Deadlines are generous bounds (the Lambda timeout in template.yaml), not latency assertions."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.faultproxy import FaultProxy
from tests import ROOT
from xmemo.local.spawn import start_gateway
from xmemo.store.opensearch import queries as q

from . import cases
from .faults import LAMBDA_TIMEOUT_S, Writers, content_of, marker_of
from .surfaces import OpenSearchIndex

pytestmark = [pytest.mark.e2e, pytest.mark.integration]

WRITER = "fault-writer"
LABEL = "faults[opensearch {}]"  # the generated-cases line of the run summary
FAULT_S = 2.5
STORE_ENV = {
    "XMEMO_STORE": "opensearch",
    "XMEMO_OPENSEARCH_KNN": "false",
    # small, so a fault is felt and refused quickly: 0.5 s an attempt, 2 retries, 2 s in all
    "XMEMO_OPENSEARCH_TIMEOUT_S": "0.5",
    "XMEMO_OPENSEARCH_RETRIES": "2",
    "XMEMO_OPENSEARCH_DEADLINE_S": "2.0",
    "XMEMO_GATEWAY_WORKERS": "6",
    "POWERTOOLS_LOG_LEVEL": "ERROR",
}


def begin(fault: str, proxy: FaultProxy) -> None:
    if fault == "stopped":
        proxy.stop()
    elif fault == "slow":
        proxy.delay, proxy.jitter = 0.6, 0.4
    else:  # throttling
        proxy.fail_ratio = 0.7
        proxy.fail((429, 503), 10**9)


def end(fault: str, proxy: FaultProxy) -> None:
    if fault == "stopped":
        proxy.start()
    elif fault == "slow":
        proxy.delay = proxy.jitter = 0.0
    else:
        proxy.fail(503, 0)
        proxy.fail_ratio = 1.0


def by_marker(index: OpenSearchIndex) -> dict[str, list[dict]]:
    """Every document of the alias, read with a bare client on the server itself (not
    through the proxy, not through the store's code), grouped by the marker it carries."""
    index.client.indices.refresh(index=index.alias)
    hits = index.client.search(index=index.alias, body={"query": {"match_all": {}}, "size": 10000})["hits"]["hits"]
    assert len(hits) < 10000
    out: dict[str, list[dict]] = {}
    for h in hits:
        out.setdefault(marker_of(h["_source"]["content"]), []).append(h)
    return out


def check_whole(hit: dict) -> None:
    """A stored document is a whole memory: it round-trips through the mapping, sits on
    its duplicate slot, and carries the content its writer sent."""
    src = hit["_source"]
    memory = q.from_document(src)
    assert q.to_document(memory) == src, f"a partial or altered document: {hit}"
    assert hit["_id"] == q.slot_id(memory), hit
    assert memory.content == content_of(marker_of(memory.content)) and memory.owner == WRITER, hit


@pytest.fixture
def store_behind_proxy(tmp_path, osmem_clone):
    proxy = FaultProxy(osmem_clone.url)
    gw = start_gateway(tmp_path, {**STORE_ENV, "XMEMO_OPENSEARCH_URL": proxy.url}, cwd=ROOT)
    yield gw, proxy, OpenSearchIndex(osmem_clone.url)
    gw.stop()
    proxy.close()


@pytest.mark.parametrize("fault", ["stopped", "slow", "throttling"])
def test_opensearch_stopped_slow_or_throttling_answers_in_time_and_keeps_writes_exactly_once(store_behind_proxy, fault):
    gw, proxy, index = store_behind_proxy
    writers = Writers(gw.url, gw.token(WRITER), label=LABEL, mcp=True)
    writers.run(16, 8)  # before the fault: the index exists, the workers are warm
    assert len(writers.acked) == 16 and not writers.refused, "the store was not up before the fault"
    stop = threading.Event()
    during = writers.background(10_000, 12, stop=stop, read_every=3)
    time.sleep(0.3)  # mid-run: every client is busy when the fault starts
    begin(fault, proxy)
    with writers.lock:  # the first writes under the fault supersede earlier memories, one each
        writers.pool = sorted(writers.acked.values())[:4]
    time.sleep(FAULT_S)
    end(fault, proxy)
    stop.set()
    try:
        during.result(timeout=4 * LAMBDA_TIMEOUT_S)  # re-raises what any client asserted
    except TimeoutError:
        pytest.fail("a client hung")
    proxy.drain()  # stalled requests have reached the server (or given up)
    before_retry = dict(writers.refused)
    writers.pool = []
    after = Writers(gw.url, writers.token, label=LABEL, mcp=True)
    after.run(16, 4)  # after recovery
    assert len(after.acked) == 16 and not after.refused, "the store did not recover"

    assert max(writers.slowest, after.slowest) < LAMBDA_TIMEOUT_S, f"a call took {writers.slowest:.1f}s"
    assert not writers.unknown, "a call got no answer"
    assert writers.refused, "the fault was never felt"

    # -- after recovery: the index itself -----------------------------------------------
    got = by_marker(index)
    for hits in got.values():
        for hit in hits:
            check_whole(hit)
    lost = {m for m, ref in {**writers.acked, **after.acked}.items() if [h["_source"]["reference"] for h in got.get(m, [])] != [ref]}
    assert not lost, f"acknowledged writes missing, doubled or under another reference: {len(lost)}"
    doubled = {m for m in before_retry if len(got.get(m, [])) > 1}
    assert not doubled, f"refused writes stored twice: {doubled}"
    landed = {m: got[m][0]["_source"]["reference"] for m in before_retry if m in got}
    if fault == "slow":
        assert landed, "no refused write landed late: the slow store was not slow"
    # a landed write that supersedes: the old memory may not name it yet (see the docstring)
    by_ref = {hit["_source"]["reference"]: hit["_source"] for hits in got.values() for hit in hits}
    unfinished = {m for m in landed if m in writers.supersedes and by_ref[writers.supersedes[m]].get("superseded_by") != landed[m]}

    # the clients retry every refused write: it dedupes to what landed, or is stored now
    h = {"Authorization": f"Bearer {writers.token}"}
    final = dict(writers.acked)
    for marker, body in sorted(before_retry.items()):
        r = httpx.post(f"{gw.url}/v1/memories", json=body, headers=h, timeout=LAMBDA_TIMEOUT_S * 2)
        if marker in landed:
            assert r.status_code == 200 and r.json()["duplicate"], f"retry of a landed write: {r.status_code} {r.text[:300]}"
            assert r.json()["memory"]["reference"] == landed[marker]
        else:
            assert r.status_code == 201, f"retry of a refused write: {r.status_code} {r.text[:300]}"
        final[marker] = r.json()["memory"]["reference"]

    got = by_marker(index)
    for hits in got.values():
        for hit in hits:
            check_whole(hit)
    wrong = {m for m, ref in final.items() if [x["_source"]["reference"] for x in got.get(m, [])] != [ref]}
    assert not wrong, f"after the retries, writes missing or doubled: {len(wrong)}"
    expected = set(final) | set(after.acked)
    assert set(got) == expected, f"stored but never written: {set(got) - expected}"
    # supersedes are complete: the old memory names its successor, every successor exists
    by_ref = {hit["_source"]["reference"]: hit["_source"] for hits in got.values() for hit in hits}
    for marker, old in writers.supersedes.items():
        if marker in final:
            assert by_ref[old].get("superseded_by") == final[marker], f"half a supersede: {old} → {final[marker]}"
    dangling = {ref for ref, src in by_ref.items() if src.get("superseded_by") and src["superseded_by"] not in by_ref}
    assert not dangling, f"superseded by a memory that is not stored: {dangling}"
    # and the read path serves them: a strict search on a marker finds exactly its live memory
    for marker in sorted(final)[:8]:
        r = httpx.post(f"{gw.url}/v1/search", json={"query": marker}, headers=h, timeout=30)
        assert r.status_code == 200, r.text
        live = [] if by_ref[final[marker]].get("superseded_by") else [final[marker]]
        assert [x["reference"] for x in r.json()["results"]] == live, r.text
    cases.record(f"faults[opensearch {fault}: acknowledged around the fault]", len(writers.acked) - 16)
    cases.record(f"faults[opensearch {fault}: refused]", len(before_retry))
    cases.record(f"faults[opensearch {fault}: refused but landed]", len(landed))
    cases.record(f"faults[opensearch {fault}: landed, supersede finished by the retry]", len(unfinished))
