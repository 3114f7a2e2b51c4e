"""tiktoken encodings loaded from files shipped in this package, checked by sha256.

tiktoken would otherwise download its BPE files on first use; Lambda and laptops without
network must never do that. The regexes and special tokens are tiktoken's own
(`tiktoken_ext.openai_public`); a unit test keeps them identical.

Parsing the shipped text file (gunzip, base64 of 200k tokens) is about half of building
o200k, and the functions that pack build it in every initialisation. So the build (`make
install`, the layer's build) derives from the sha256-checked file a second, fast form:
the tokens in rank order as one `marshal`led tuple, under a header naming the sha256 of
the text it came from, the marshal format and the payload's own sha256. It is used only
when all three match, else the text is parsed (a stale or foreign fast file costs time,
never correctness); a unit test checks both forms give the same ranks."""

from __future__ import annotations

import binascii
import gzip
import hashlib
import json
import marshal
import warnings
from functools import lru_cache
from pathlib import Path
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


# Next to this module on disk (the layer and every install are directories): a path, not
# `importlib.resources`, whose readers a packing function would otherwise import just for this.
ENCODINGS_DIR = Path(__file__).parent / "encodings"


class EncodingFileError(RuntimeError):
    """A shipped encoding file is missing or does not match its sha256."""


def load_ranks(name: str) -> dict[bytes, int]:
    """The mergeable ranks of `name`: from the fast form when it is present and matches the
    shipped text file's sha256, else parsed from that file."""
    fast = _load_fast_ranks(name)
    return fast if fast is not None else parse_ranks(name)


def parse_ranks(name: str) -> dict[bytes, int]:
    """The mergeable ranks of `name` parsed from the shipped, sha256-checked text file."""
    spec = ENCODINGS[name]
    try:
        raw = gzip.decompress((ENCODINGS_DIR / f"{name}.tiktoken.gz").read_bytes())
    except FileNotFoundError as exc:
        raise EncodingFileError(f"encoding file for {name} is not shipped") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec["sha256"]:
        raise EncodingFileError(f"encoding file for {name} has sha256 {digest}, expected {spec['sha256']}")
    # `token rank` pairs, whitespace-separated; parsed in bulk (about twice as fast as a loop
    # over lines, and it runs in every packing function's initialisation)
    fields = raw.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


def fast_path(name: str) -> Path:
    """Where the fast form of `name` lives: next to its text file, in the package."""
    return ENCODINGS_DIR / f"{name}.ranks.marshal"


def write_fast_ranks(name: str, directory: Path | None = None) -> Path:
    """Derive the fast form of `name` from the checked text file (into `directory`, default
    the package's encodings directory). tiktoken's ranks are 0..n-1, so the tokens in rank
    order are the whole mapping; anything else is refused rather than stored wrongly."""
    ranks = parse_ranks(name)
    by_rank = tuple(sorted(ranks, key=ranks.__getitem__))
    if [ranks[token] for token in by_rank] != list(range(len(by_rank))):
        raise EncodingFileError(f"the ranks of {name} are not 0..n-1; no fast form can hold them")
    payload = marshal.dumps(by_rank)
    header = {"source_sha256": ENCODINGS[name]["sha256"], "marshal_version": marshal.version,
              "payload_sha256": hashlib.sha256(payload).hexdigest()}
    target = (directory / fast_path(name).name) if directory is not None else fast_path(name)
    target.write_bytes(json.dumps(header, sort_keys=True).encode() + b"\n" + payload)
    return target


def _load_fast_ranks(name: str) -> dict[bytes, int] | None:
    """The ranks from the fast form, or None when it is absent or does not match (with a
    warning: the function still starts, only slower)."""
    try:
        raw = fast_path(name).read_bytes()
    except FileNotFoundError:
        return None
    head, _, payload = raw.partition(b"\n")
    try:
        header = json.loads(head)
    except ValueError:
        header = {}
    expected = {"source_sha256": ENCODINGS[name]["sha256"], "marshal_version": marshal.version,
                "payload_sha256": hashlib.sha256(payload).hexdigest()}
    if header != expected:
        warnings.warn(f"the fast form of {name} does not match its text file or this Python; parsing the text", stacklevel=3)
        return None
    by_rank = marshal.loads(payload)
    return dict(zip(by_rank, range(len(by_rank))))


@lru_cache(maxsize=4)
def ranks(name: str) -> dict[bytes, int]:
    """`load_ranks`, once per process (the `Encoding` keeps them anyway); a separate step so
    a start can time loading the ranks apart from tiktoken's own construction."""
    if name not in ENCODINGS:
        raise ValueError(f"unsupported encoding {name!r}; shipped: {', '.join(ENCODINGS)}")
    return load_ranks(name)


@lru_cache(maxsize=4)
def get_encoding(name: str = "o200k_base") -> tiktoken.Encoding:
    """The tiktoken `Encoding` called `name`, built offline (cached per process)."""
    mergeable_ranks = ranks(name)
    import tiktoken

    spec = ENCODINGS[name]
    return tiktoken.Encoding(name=name, pat_str=spec["pat_str"], mergeable_ranks=mergeable_ranks, special_tokens=spec["special_tokens"])


def count(text: str, name: str = "o200k_base") -> int:
    """Tokens of `text`; special-token strings count as ordinary text."""
    return len(get_encoding(name).encode_ordinary(text))


def main() -> None:
    """`python -m xmemo.tokens [DIRECTORY]`: write the fast form of every shipped encoding
    (into the package, or DIRECTORY: the layer's build)."""
    import sys

    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    for name in ENCODINGS:
        print(write_fast_ranks(name, directory))


if __name__ == "__main__":
    main()
