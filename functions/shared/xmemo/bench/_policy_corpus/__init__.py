"""The capture policy's corpora: benign snippets that must come back unchanged and
synthetic secrets that must not survive. Used by `make test` and `xmemo bench policy`."""

from __future__ import annotations

from . import benign_code, benign_config, benign_near_misses, benign_prose, benign_vocabulary
from .secrets import SecretSample, secret_corpus


def benign_corpus() -> dict[str, list[str]]:
    """Category → snippets that hold no secret and must come back byte for byte."""
    return {**benign_code.SNIPPETS, **benign_config.SNIPPETS, **benign_prose.SNIPPETS, **benign_near_misses.SNIPPETS, **benign_vocabulary.SNIPPETS}


__all__ = ["SecretSample", "benign_corpus", "secret_corpus"]
