"""The exact texts of SPEC §5 (public MCP profile), made from the tool results of
`xmemo.results`. Nothing else formats tool output; this module calls no logic."""

from __future__ import annotations

import re
from typing import Callable

from .models import Memory
from .results import (
    ContextResult,
    ForgetResult,
    ListResult,
    MemoryResult,
    RecallResult,
    RememberResult,
    Result,
    SearchResult,
)

NO_MATCH = "No matching XMemo memory was found."
INDENT = "   "

# What ends a line for some reader: str.splitlines() splits on all of these, and so do
# many clients and terminals. Stored text must never end a line of the format with one.
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# Other C0/C1 control characters (tab kept): shown as U+FFFD, never passed through.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x1f\x7f-\x84\x86-\x9f]")


def data_lines(text: str) -> list[str]:
    """A memory's text as lines that are safe to print: every kind of line break splits
    it, every other control character is replaced."""
    return [_CONTROL.sub("\ufffd", line) for line in _LINE_BREAK.split(text)]


def as_data(text: str) -> str:
    """Stored text as it may appear in a text profile: its first line where the caller
    puts it, every further line indented (SPEC §5: a memory never speaks in the
    service's voice, so no memory can start a line of the format)."""
    first, *rest = data_lines(text)
    return "\n".join([first, *(INDENT + line for line in rest)])


def _inline(text: str) -> str:
    """A stored value inside one line of the format (a location): no break, no control."""
    return " ".join(data_lines(text))


def _ref_line(reference: str, type_: str, location: str) -> str:
    return f"Reference: {reference} | Type: {type_} | Location: {_inline(location)}"


def _record_line(m: Memory) -> str:
    return f"{_ref_line(m.reference, m.type, m.location)} | Boundary: {m.boundary}"


def remember_text(result: RememberResult) -> str:
    m = result.memory
    head = "Duplicate of" if result.duplicate else "Stored"
    lines = [f"{head}: {_ref_line(m.reference, m.type, m.location)}"]
    if result.redacted:
        lines.append("Redacted: " + ", ".join(result.redacted))
    if result.cleaned:
        lines.append("Cleaned: " + ", ".join(result.cleaned))
    return "\n".join(lines)


def hits_text(result: SearchResult) -> str:
    if not result.results:
        return NO_MATCH
    title = "Recall" if isinstance(result, RecallResult) else "Search"
    lines = [f"### XMemo {title}", f"Results: {len(result.results)}"]
    for n, hit in enumerate(result.results, 1):
        lines.append(f"{n}. {_record_line(hit)}")
        lines.extend(INDENT + line for line in data_lines(hit.content))
    return "\n".join(lines)


def context_text(result: ContextResult) -> str:
    if not result.matched:
        return NO_MATCH
    b = result.budget
    lines = ["### XMemo Context", f"Items: {b.used_items}"]
    if b.dropped or b.shortened:
        lines.append(
            f"Budget: used_items={b.used_items}/{b.max_items} used_tokens={b.used_tokens}/{b.max_tokens} "
            f"dropped={b.dropped} shortened={b.shortened}"
        )
    lines.extend(_ref_line(i.reference, i.type, i.location) for i in result.items)
    lines.append("Context:")
    lines.append(result.context_text)
    return "\n".join(lines)


def memory_text(result: MemoryResult) -> str:
    return "\n".join([_record_line(result.memory), *(INDENT + line for line in data_lines(result.memory.content))])


def list_text(result: ListResult) -> str:
    if not result.memories:
        return NO_MATCH
    lines = ["### XMemo Memories", f"Results: {len(result.memories)}"]
    lines.extend(f"{n}. {_record_line(m)}" for n, m in enumerate(result.memories, 1))
    if result.next_cursor:
        lines.append(f"Next cursor: {result.next_cursor}")
    return "\n".join(lines)


def forget_text(result: ForgetResult) -> str:
    return f"Deleted: {result.deleted}"


_TEXTS: dict[type, Callable] = {
    RememberResult: remember_text,
    SearchResult: hits_text,
    RecallResult: hits_text,
    ContextResult: context_text,
    MemoryResult: memory_text,
    ListResult: list_text,
    ForgetResult: forget_text,
}


def text(result: Result) -> str:
    """The public-profile text of any tool result."""
    return _TEXTS[type(result)](result)
