"""The OpenSearch store (AWS): client and retries (`client`), index design (`index`),
index management (`manage`), pure request builders (`queries`) and the store (`store`)."""

from .store import OpenSearchStore

__all__ = ["OpenSearchStore"]
