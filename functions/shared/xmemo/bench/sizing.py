"""`xmemo bench sizing`: the OpenSearch index's size and cost for a number of tenants, as
arithmetic over a real document (`queries.to_document` of a representative memory, with
its vector and token states) and the AWS OpenSearch Service sizing guidance. Every input
is a flag, every step is printed, and the report is saved; prices are assumptions to check
against the current price list, not measurements."""

from __future__ import annotations

import json
import math
import random
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ._report import markdown_table, save

# AWS's minimum-storage formula: source × (1 + replicas) × (1 + 0.10 indexing overhead)
# / (1 - 0.05 Linux reserved) / (1 - 0.20 service overhead) ≈ source × (1 + replicas) × 1.45.
STORAGE_FACTOR = 1.1 / 0.95 / 0.8
SHARD_TARGET_GIB = 25.0  # AWS: 10–30 GiB per shard where search latency matters
# The instance the figures assume (memory-optimised, graviton): RAM, EBS per node, $/hour.
NODE = {"type": "r7g.2xlarge.search", "ram_gib": 64, "ebs_gib": 1024, "usd_hour": 0.7}
GP3_USD_GIB_MONTH = 0.122
HOURS_MONTH = 730


def memory_bytes(content_chars: int, dimension: int, hnsw_m: int) -> dict[str, float]:
    """Bytes one memory costs: its `_source` fields as JSON (measured on a real document),
    an inverted-index allowance equal to the searched texts, the vector file (4 B × d) and
    the HNSW graph held in native memory (OpenSearch's estimate 1.1 × (4 d + 8 m))."""
    import numpy as np

    from ..retrieval.late import TokenStates
    from ..models import Memory
    from ..store.opensearch import queries as q
    from .store import WORDS

    rng = random.Random(5)
    content = ""
    while len(content) < content_chars:
        content += rng.choice(WORDS) + " "
    vector = np.random.default_rng(5).normal(size=dimension).astype(np.float32)
    vector /= np.linalg.norm(vector)
    tokens = max(1, content_chars // 4)  # ~4 characters a token
    states = np.random.default_rng(6).normal(size=(tokens, dimension)).astype(np.float32)
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    memory = Memory(reference="mem_01JAAAAAAAAAAAAAAAAAAAAAAA", type="note", content=content.strip(), location="default",
                    bucket="default", owner="tenant", boundary="owner:tenant", created_at=at, updated_at=at,
                    content_sha256="0" * 64, embedding=tuple(float(x) for x in vector),
                    token_states=TokenStates.of(list(range(tokens)), states).to_bytes())
    doc = q.to_document(memory)
    size = {k: len(json.dumps(v, separators=(",", ":"))) for k, v in doc.items()}
    vectors = size.pop("embedding") + size.pop("vector_bytes")
    states_b = size.pop("token_states")
    text = sum(size.values())
    searched = sum(len(json.dumps(doc[k])) for k in ("text", "terms", "words") if k in doc)
    return {
        "source_text_fields": text, "source_vector_fields": vectors, "source_token_states": states_b,
        "inverted_index": searched, "vector_file": 4 * dimension, "hnsw_graph_memory": 1.1 * (4 * dimension + 8 * hnsw_m),
    }


def plan(tenants: int, per_tenant: int, per_memory: dict[str, float], replicas: int) -> dict[str, Any]:
    memories = tenants * per_tenant
    disk = sum(v for k, v in per_memory.items() if k != "hnsw_graph_memory")
    primary_gib = memories * disk / 2**30
    storage_gib = primary_gib * (1 + replicas) * STORAGE_FACTOR
    shards = max(1, math.ceil(primary_gib / SHARD_TARGET_GIB))
    graph_gib = memories * per_memory["hnsw_graph_memory"] * (1 + replicas) / 2**30
    heap = min(NODE["ram_gib"] / 2, 32)
    knn_per_node = 0.5 * (NODE["ram_gib"] - heap)  # the k-NN circuit breaker's default 50% of what the heap leaves
    nodes = max(2 if replicas else 1, math.ceil(storage_gib / NODE["ebs_gib"]), math.ceil(graph_gib / knn_per_node))
    nodes = max(nodes, min(shards * (1 + replicas), 3 if replicas else 1))
    monthly = nodes * NODE["usd_hour"] * HOURS_MONTH + nodes * NODE["ebs_gib"] * GP3_USD_GIB_MONTH
    return {"tenants": tenants, "memories": memories, "primary_gib": round(primary_gib, 1), "storage_gib": round(storage_gib, 1),
            "primary_shards": shards, "replicas": replicas, "graph_memory_gib": round(graph_gib, 1), "nodes": nodes,
            "usd_month": round(monthly), "usd_per_tenant_month": round(monthly / tenants, 4)}


def register(sub) -> None:
    p = sub.add_parser("sizing", help="the OpenSearch index's size, shards, nodes and monthly cost for 1k/100k/10M tenants")
    p.add_argument("--tenants", default="1000,100000,10000000")
    p.add_argument("--memories-per-tenant", type=int, default=500)
    p.add_argument("--content-chars", type=int, default=400)
    p.add_argument("--dimension", type=int, default=384)
    p.add_argument("--replicas", type=int, default=1)
    p.add_argument("--out", type=Path)
    p.set_defaults(func=run)


def run(args) -> int:
    per_memory = memory_bytes(args.content_chars, args.dimension, 16)
    rows = [plan(int(t), args.memories_per_tenant, per_memory, args.replicas) for t in args.tenants.split(",")]
    report = {"per_memory_bytes": {k: round(v) for k, v in per_memory.items()}, "node": NODE, "gp3_usd_gib_month": GP3_USD_GIB_MONTH,
              "storage_factor": round(STORAGE_FACTOR, 3), "shard_target_gib": SHARD_TARGET_GIB,
              "memories_per_tenant": args.memories_per_tenant, "content_chars": args.content_chars, "plans": rows}
    md = ["## Index sizing (arithmetic; prices assumed)\n",
          markdown_table(["bytes per memory", "value"], [[k, round(v)] for k, v in per_memory.items()]),
          markdown_table(list(rows[0]), [list(r.values()) for r in rows])]
    print("\n".join(md))
    save(args.out, "sizing", report, "\n".join(md))
    return 0
