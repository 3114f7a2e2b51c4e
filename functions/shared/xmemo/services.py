"""What the tools need, built once per process from `Settings` and passed in, so tests and
benchmarks hand in their own store, embedder or clock instead of patching."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from typing import Callable

from .config import Settings
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


def make_store(settings: Settings) -> MemoryStore:
    if settings.store == "sqlite":
        from .store.sqlite import SQLiteStore

        return SQLiteStore(
            settings.data_dir / "xmemo.sqlite3",
            settings.sqlite_busy_timeout_ms,
            context_weight=settings.context_weight,
            cache_mib=settings.sqlite_cache_mib,
            mmap_mib=settings.sqlite_mmap_mib,
        )
    from .store.opensearch import OpenSearchStore  # the AWS backend

    return OpenSearchStore.from_settings(settings)


def build_services(settings: Settings | None = None) -> Services:
    settings = settings or Settings()
    return Services(settings, make_store(settings), make_embedder(settings.embedder, settings.embedder_threads, settings=settings))


@lru_cache(maxsize=1)
def default_settings() -> Settings:
    """Process-wide settings, read once from the environment without opening the store."""
    return Settings()


@lru_cache(maxsize=1)
def default_services() -> Services:
    """Process-wide services (warm Lambda invocations reuse the store connection)."""
    return build_services(default_settings())
