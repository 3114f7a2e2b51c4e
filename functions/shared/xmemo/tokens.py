"""tiktoken encodings loaded from files shipped in this package, checked by sha256.

tiktoken would otherwise download its BPE files on first use; Lambda and laptops without
network must never do that. The regexes and special tokens are tiktoken's own
(`tiktoken_ext.openai_public`); a unit test keeps them identical."""

from __future__ import annotations

import binascii
import gzip
import hashlib
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where an encoding is built: a function that never packs never loads it
    import tiktoken

_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_CL100K_PAT = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""

ENCODINGS = {
    "o200k_base": {
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": _O200K_PAT,
        "special_tokens": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    },
    "cl100k_base": {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": _CL100K_PAT,
        "special_tokens": {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    },
}


class EncodingFileError(RuntimeError):
    """A shipped encoding file is missing or does not match its sha256."""


def load_ranks(name: str) -> dict[bytes, int]:
    """The mergeable ranks of `name` from the shipped, sha256-checked file."""
    spec = ENCODINGS[name]
    try:
        raw = gzip.decompress(resources.files("xmemo").joinpath(f"encodings/{name}.tiktoken.gz").read_bytes())
    except FileNotFoundError as exc:
        raise EncodingFileError(f"encoding file for {name} is not shipped") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec["sha256"]:
        raise EncodingFileError(f"encoding file for {name} has sha256 {digest}, expected {spec['sha256']}")
    # `token rank` pairs, whitespace-separated; parsed in bulk (about twice as fast as a loop
    # over lines, and it runs in every packing function's initialisation)
    fields = raw.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


@lru_cache(maxsize=4)
def get_encoding(name: str = "o200k_base") -> tiktoken.Encoding:
    """The tiktoken `Encoding` called `name`, built offline (cached per process)."""
    if name not in ENCODINGS:
        raise ValueError(f"unsupported encoding {name!r}; shipped: {', '.join(ENCODINGS)}")
    import tiktoken

    spec = ENCODINGS[name]
    return tiktoken.Encoding(
        name=name, pat_str=spec["pat_str"], mergeable_ranks=load_ranks(name), special_tokens=spec["special_tokens"]
    )


def count(text: str, name: str = "o200k_base") -> int:
    """Tokens of `text`; special-token strings count as ordinary text."""
    return len(get_encoding(name).encode_ordinary(text))
