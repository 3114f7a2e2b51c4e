"""`xmemo bench sizing`'s arithmetic: bytes per memory read from a real document, storage
by AWS's minimum-storage rule, shards at the target size, nodes by the larger of storage
and k-NN graph memory."""

from __future__ import annotations

import math

from xmemo.bench.sizing import NODE, SHARD_TARGET_GIB, STORAGE_FACTOR, memory_bytes, plan


def test_bytes_per_memory_come_from_the_document_the_store_writes():
    b = memory_bytes(400, 384, 16)
    assert b["vector_file"] == 1536 and b["hnsw_graph_memory"] == 1.1 * (4 * 384 + 8 * 16)
    assert b["source_vector_fields"] > 2048  # the packed copy alone is 2,048 base64 characters
    assert b["source_text_fields"] > 400 and b["source_token_states"] > 100 * 48


def test_the_plan_follows_the_sizing_rules():
    per = {"a": 1000.0, "hnsw_graph_memory": 1830.0}
    small, large = plan(1000, 500, per, 1), plan(10_000_000, 500, per, 1)
    assert small["primary_shards"] == 1 and small["nodes"] == 2
    primary = 10_000_000 * 500 * 1000 / 2**30
    assert large["primary_shards"] == math.ceil(primary / SHARD_TARGET_GIB)
    assert large["storage_gib"] == round(primary * 2 * STORAGE_FACTOR, 1)
    graph = 10_000_000 * 500 * 1830 * 2 / 2**30
    assert large["nodes"] >= math.ceil(graph / (0.5 * (NODE["ram_gib"] - 32)))
