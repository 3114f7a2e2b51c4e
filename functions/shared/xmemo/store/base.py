"""The `MemoryStore` protocol every store implements, and what its reads return.

Every read takes a `ReadFilter` built by `xmemo.auth.read_filter`, so a store cannot be
asked for memories without the caller's visibility applied."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, Sequence

from ..auth import ReadFilter
from ..models import Memory


@dataclass(frozen=True)
class Hit:
    memory: Memory
    score: float
    vector: Sequence[float] | None = None  # a semantic hit's stored unit vector, when the store has it

    @property
    def reference(self) -> str:
        """The hit's memory's reference: what ranking reads of the hits it does not keep, so a
        store may decode the rest of a memory only when it is read (`sqlite.RowHit`)."""
        return self.memory.reference

    @property
    def place(self) -> tuple[str, str]:
        """The memory's location and bucket (`fusion.leg_weights` reads them of every hit
        fetched, kept or not; `sqlite.RowHit` answers from its row)."""
        return self.memory.location, self.memory.bucket


@dataclass
class Candidates:
    """Both retrieval legs' hits, best first, as one store round trip returns them."""

    lexical: list[Hit] = field(default_factory=list)
    semantic: list[Hit] = field(default_factory=list)
    semantic_unavailable: str | None = None  # why a semantic leg that was asked for did not run
    # True: the hits' memories carry only what ranking reads (reference, `created_at`, the
    # context group's fields); `MemoryStore.memories` brings the whole records of those returned
    partial: bool = False


class MemoryStore(Protocol):
    def insert(self, memory: Memory) -> tuple[Memory, bool]:
        """Store `memory` atomically. If an active memory with the same boundary, bucket,
        temporariness and content hash exists, store nothing and return it with True.
        When `memory.supersedes` is set, mark that memory superseded in the same write."""

    def insert_many(self, memories: Sequence[Memory]) -> list[tuple[Memory, bool]]:
        """`insert` each memory, in order, with the same outcomes (a later one in the batch
        may be a duplicate of an earlier one); stores write the batch in fewer round trips."""

    def get(self, reference: str, rf: ReadFilter) -> Memory | None:
        """The memory if `rf` lets the caller see it (and it is live), else None."""

    def list(self, rf: ReadFilter, limit: int, cursor: str | None) -> tuple[list[Memory], str | None]:
        """Live visible memories, newest first, and the cursor of the next page."""

    def search(
        self,
        text: str,
        vector: Sequence[float] | None,
        rf: ReadFilter,
        *,
        lexical_k: int,
        semantic_k: int,
        strict: bool,
    ) -> Candidates:
        """Lexical hits (all terms when `strict`, any term otherwise) and, when a vector is
        given, nearest neighbours by cosine; both within `rf`, best first, equal scores
        newest first (recency is the tie-breaker)."""

    def token_states(self, references: Sequence[str], rf: ReadFilter) -> dict[str, bytes]:
        """The stored token states (`late.TokenStates.to_bytes()`) of those of `references`
        that `rf` lets the caller see and that have them (a memory written without a local
        embedder, or before states were kept, has none): what `recall`'s late-interaction
        leg scores its candidate pool with."""

    def memories(self, references: Sequence[str], rf: ReadFilter, *, states: bool = False) -> dict[str, Memory]:
        """The whole records of those of `references` that `rf` lets the caller see, by
        reference, with their `token_states` when `states` (and stored): what a read returns
        of candidates a `search` gave as `partial`."""

    def delete(self, rf: ReadFilter, reference: str | None = None) -> int:
        """Delete the memory `reference`, or every memory matching `rf`; the count."""

    def purge_expired(self, now: datetime) -> int:
        """Delete memories whose `expires_at` has passed; the count."""

    def finish_supersedes(self, now: datetime) -> int:
        """Mark superseded the memories that a recent superseding write cut off by a store
        failure left unmarked (a store with transactions has none); the count."""

    def count(self) -> int:
        """How many memories are stored (all tenants; for operations and benchmarks)."""

    def close(self) -> None: ...
