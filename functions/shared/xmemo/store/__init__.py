"""Stores behind one protocol: `sqlite` (embedded default) and `opensearch` (AWS)."""

from .base import Candidates, Hit, MemoryStore

__all__ = ["Candidates", "Hit", "MemoryStore"]
