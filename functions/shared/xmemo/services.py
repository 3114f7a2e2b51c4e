"""What the tools need, built once per process from `Settings` and passed in, so tests and
benchmarks hand in their own store, embedder or clock instead of patching. This is where
the settings groups are composed: each part of the code gets its own group from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Callable

from .config import BedrockSettings, CaptureSettings, EdgeSettings, PackingSettings, RetrievalSettings, Settings
from .embedding import Embedder, make_embedder
from .store.base import MemoryStore


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Services:
    settings: Settings
    store: MemoryStore
    embedder: Embedder | None
    clock: Callable[[], datetime] = field(default=utc_now)
    # the groups the tools and the edge read, taken from `settings` once
    edge: EdgeSettings = field(init=False)
    capture: CaptureSettings = field(init=False)
    retrieval: RetrievalSettings = field(init=False)
    packing: PackingSettings = field(init=False)

    def __post_init__(self) -> None:
        self.edge = self.settings.part(EdgeSettings)
        self.capture = self.settings.part(CaptureSettings)
        self.retrieval = self.settings.part(RetrievalSettings)
        self.packing = self.settings.part(PackingSettings)


def make_store(settings: Settings, *, reindexing: bool = False) -> MemoryStore:
    """The configured store, checked against the embedder it was made with (`xmemo.pin`):
    a mismatch refuses (`StoreMismatch`) unless `reindexing` (`xmemo reindex`)."""
    if settings.store == "sqlite":
        from .pin import current_pin
        from .store.sqlite import SQLiteStore

        return SQLiteStore(
            settings.data_dir / "xmemo.sqlite3",
            settings.sqlite_busy_timeout_ms,
            context_weight=settings.context_weight,
            cache_mib=settings.sqlite_cache_mib,
            mmap_mib=settings.sqlite_mmap_mib,
            pin=current_pin(settings.embedder, settings.part(BedrockSettings)),
            reindexing=reindexing,
        )
    from .store.opensearch import OpenSearchStore  # the AWS backend

    return OpenSearchStore.from_settings(settings)


def build_services(settings: Settings | None = None) -> Services:
    settings = settings or Settings()
    embedder = make_embedder(settings.embedder, settings.embedder_threads, bedrock=settings.part(BedrockSettings))
    return Services(settings, make_store(settings), embedder)


@lru_cache(maxsize=1)
def default_settings() -> Settings:
    """Process-wide settings, read once from the environment without opening the store."""
    return Settings()


@lru_cache(maxsize=1)
def default_services() -> Services:
    """Process-wide services (warm Lambda invocations reuse the store connection)."""
    return build_services(default_settings())
