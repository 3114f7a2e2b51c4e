"""The two reference systems XMemo is compared with, over exactly the same turns:
plain BM25 (`bm25s`, English Snowball stems, English stop words) and dense-only cosine
over the configured embedder's passage vectors. Their context packs use XMemo's packer."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...packing import pack


class BM25Baseline:
    """bm25s over one conversation's turns."""

    def __init__(self, corpus: Sequence[str]):
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self._n = len(corpus)
        tokens = bm25s.tokenize(list(corpus), stopwords="en", stemmer=self._stemmer, show_progress=False)
        self._retriever = bm25s.BM25()
        self._retriever.index(tokens, show_progress=False)
        self._vocab = tokens.vocab

    def rank(self, query: str, k: int) -> list[int]:
        """Indices of the best `k` turns, best first (fewer when the query shares no term)."""
        terms = self._bm25s.tokenize(
            query, stopwords="en", stemmer=self._stemmer, return_ids=False, show_progress=False
        )[0]
        terms = [t for t in terms if t in self._vocab]
        if not terms or self._n == 0:
            return []
        docs, scores = self._retriever.retrieve([terms], k=min(k, self._n), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0]) if s > 0]


class DenseBaseline:
    """Cosine between the query vector and every turn's (normalised) passage vector."""

    def __init__(self, vectors: np.ndarray):
        self._matrix = np.asarray(vectors, dtype=np.float32)

    def rank(self, query_vector: np.ndarray, k: int) -> list[int]:
        if len(self._matrix) == 0:
            return []
        scores = self._matrix @ np.asarray(query_vector, dtype=np.float32)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        return [int(i) for i in top[np.argsort(-scores[top], kind="stable")]]


def pack_ranked(
    contents: Sequence[str], *, max_items: int, max_tokens: int, encoding: str, min_useful_tokens: int
) -> tuple[list[int], int]:
    """Greedy pack of a ranked list with XMemo's packer: (positions packed, tokens used)."""
    packed = pack(
        contents, max_items=max_items, max_tokens=max_tokens, encoding=encoding, min_useful_tokens=min_useful_tokens
    )
    return [item.index for item in packed.items], packed.used_tokens
