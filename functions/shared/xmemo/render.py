"""The exact texts of SPEC §5 (public MCP profile). Nothing else formats tool output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tools import ContextResult, RememberResult, SearchResult

NO_MATCH = "No matching XMemo memory was found."


def _ref_line(reference: str, type_: str, location: str) -> str:
    return f"Reference: {reference} | Type: {type_} | Location: {location}"


def remember_text(result: "RememberResult") -> str:
    m = result.memory
    head = "Duplicate of" if result.duplicate else "Stored"
    lines = [f"{head}: {_ref_line(m.reference, m.type, m.location)}"]
    if result.redacted:
        lines.append("Redacted: " + ", ".join(result.redacted))
    return "\n".join(lines)


def hits_text(result: "SearchResult", title: str) -> str:
    if not result.hits:
        return NO_MATCH
    lines = [f"### XMemo {title}", f"Results: {len(result.hits)}"]
    for n, hit in enumerate(result.hits, 1):
        m = hit.memory
        lines.append(f"{n}. {_ref_line(m.reference, m.type, m.location)} | Boundary: {m.boundary}")
        lines.extend("   " + line for line in m.content.split("\n"))
    return "\n".join(lines)


def context_text(result: "ContextResult") -> str:
    if result.matched == 0:
        return NO_MATCH
    b = result.budget
    lines = ["### XMemo Context", f"Items: {b['used_items']}"]
    if b["dropped"] or b["shortened"]:
        lines.append(
            f"Budget: used_items={b['used_items']}/{b['max_items']} used_tokens={b['used_tokens']}/{b['max_tokens']} "
            f"dropped={b['dropped']} shortened={b['shortened']}"
        )
    lines.extend(_ref_line(i["reference"], i["type"], i["location"]) for i in result.items)
    lines.append("Context:")
    lines.append(result.context_text)
    return "\n".join(lines)
