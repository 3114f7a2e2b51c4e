"""Retrieval: from a query and a store's candidates to a ranked list, in one package.
`pipeline.retrieve` is the entry point every read that ranks goes through (recall,
search_memory, recall_context); `fusion` fuses the lexical and semantic legs (hub discount,
location-group boost, late leg, diversity), `relevance` says when a hit stands above chance,
`late` scores late interaction over token states, and `profile` holds every constant that
decides what is returned, named and versioned. The submodules load when first used (numpy
only where a vector is compared; `config` reads the profile without loading the rest)."""

from __future__ import annotations

from typing import Any

__all__ = ["retrieve", "Retrieved"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
