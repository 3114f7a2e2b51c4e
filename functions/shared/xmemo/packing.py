"""The token budget of `recall_context` (SPEC §4).

Candidates go in rank order. Each packed item is `[<n>] <content>` on its own line. An
item that does not fit whole is shortened on a token boundary (marked `…`) when at least
`min_useful_tokens` of it fit, otherwise dropped. The final text is counted exactly, so
`used_tokens == count(context_text) <= max_tokens` holds whatever BPE does at joins."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .tokens import get_encoding

ELLIPSIS = "…"


@dataclass
class PackedItem:
    index: int  # position in the candidate list
    text: str  # content as packed (possibly shortened)
    tokens: int  # tokens of this item's line as packed
    shortened: bool


@dataclass
class Pack:
    items: list[PackedItem] = field(default_factory=list)
    context_text: str = ""
    used_tokens: int = 0
    dropped: int = 0
    shortened: int = 0


def _cut(enc, text: str, max_tokens: int) -> str:
    """The longest prefix of `text` within `max_tokens` tokens, cut on a token boundary and
    never inside a UTF-8 character, with trailing white space removed."""
    ids = enc.encode_ordinary(text)[: max(max_tokens, 0)]
    raw = enc.decode_bytes(ids)
    return raw.decode("utf-8", errors="ignore").rstrip()


def pack(
    contents: Iterable[str], *, max_items: int, max_tokens: int, encoding: str, min_useful_tokens: int,
    total: int | None = None,
) -> Pack:
    """`contents` in rank order. Reading stops once the pack is full, so a lazy iterable's
    remaining items are never computed; `total` says how many candidates there were in all
    (default: `len(contents)`, for a list), and each one not packed counts as dropped."""
    enc = get_encoding(encoding)
    count = lambda s: len(enc.encode_ordinary(s))  # noqa: E731
    candidates = len(contents) if total is None else total  # type: ignore[arg-type]
    result = Pack()
    lines: list[str] = []
    used = 0  # estimate: sum of line counts (+1 per newline); checked exactly below
    queue = iter(contents)
    read = 0
    while len(result.items) < max_items and used < max_tokens:  # checked before asking for the next
        content = next(queue, None)
        if content is None:
            break
        index, read = read, read + 1
        prefix = f"[{len(result.items) + 1}] "
        line = prefix + content
        sep = 1 if lines else 0
        need = count(line) + sep
        if used + need <= max_tokens:
            lines.append(line)
            result.items.append(PackedItem(index, content, need - sep, False))
            used += need
            continue
        room = max_tokens - used - sep - count(prefix) - count(ELLIPSIS)
        if room >= min(min_useful_tokens, count(content)) and room > 0:
            cut = _cut(enc, content, room)
            if cut:
                line = prefix + cut + ELLIPSIS
                lines.append(line)
                result.items.append(PackedItem(index, cut + ELLIPSIS, count(line), True))
                used += count(line) + sep
                continue
        result.dropped += 1
    result.dropped += candidates - read  # never read: the pack was full
    # Exact check: BPE may merge across a join. Trim the tail until the true count fits.
    text = "\n".join(lines)
    total = count(text)
    while total > max_tokens and result.items:
        last = result.items[-1]
        excess = total - max_tokens
        body = last.text[: -len(ELLIPSIS)] if last.shortened else last.text
        keep = count(body) - excess - 1
        cut = _cut(enc, body, keep) if keep >= 1 else ""
        if cut:
            line = f"[{len(result.items)}] {cut}{ELLIPSIS}"
            lines[-1] = line
            result.items[-1] = PackedItem(last.index, cut + ELLIPSIS, count(line), True)
        else:
            lines.pop()
            result.items.pop()
            result.dropped += 1
        text = "\n".join(lines)
        total = count(text)
    result.context_text = text
    result.used_tokens = total
    result.shortened = sum(1 for i in result.items if i.shortened)
    return result
