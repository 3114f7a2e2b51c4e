"""Capture policy: find secrets in content before anything is stored, and redact them to
`[REDACTED:<kind>]` (default) or refuse the write (`422 capture_policy`).

Three families of rules, most specific first (`formats`: provider tokens by prefix,
structure and checksum; `labelled`: values known by their label, flag, file format or
header; `unlabelled`: high-entropy strings), all judged by the same `filters`, so that
text holding no secret comes back byte for byte."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import CapturePolicyRefused
from .formats import FORMAT_RULES
from .labelled import CONTEXT_RULES
from .rules import Rule
from .unlabelled import UNLABELLED_RULE

RULES: list[Rule] = [*FORMAT_RULES, *CONTEXT_RULES, UNLABELLED_RULE]
# (kind, pattern, group): every rule's kind and pattern, for callers that list what is caught
SECRET_PATTERNS = [(r.kind, r.pattern, r.group) for r in RULES]


@dataclass(frozen=True)
class Captured:
    content: str
    redacted: tuple[str, ...]  # kinds found, in the order they appear in the text


def find_secrets(content: str) -> list[tuple[int, int, str]]:
    """Non-overlapping (start, end, kind) spans in text order. Where rules overlap the
    spans merge and the earlier (more specific) rule names the kind."""
    lowered = content.lower()
    found: list[tuple[int, int, int]] = []
    for priority, rule in enumerate(RULES):
        found.extend((s, e, priority) for s, e in rule.spans(content, lowered))
    found.sort()
    merged: list[list[int]] = []
    for s, e, p in found:
        if merged and s < merged[-1][1]:
            last = merged[-1]
            last[1], last[2] = max(last[1], e), min(last[2], p)
        else:
            merged.append([s, e, p])
    return [(s, e, RULES[p].kind) for s, e, p in merged]


def apply_policy(content: str, mode: str) -> Captured:
    """Redact every secret, or refuse the whole write in `reject` mode."""
    spans = find_secrets(content)
    kinds = tuple(dict.fromkeys(kind for _, _, kind in spans))
    if kinds and mode == "reject":
        raise CapturePolicyRefused(
            "the content holds secrets and this deployment refuses them: " + ", ".join(kinds), {"kinds": list(kinds)}
        )
    out, at = [], 0
    for s, e, kind in spans:
        out.append(content[at:s])
        out.append(f"[REDACTED:{kind}]")
        at = e
    out.append(content[at:])
    return Captured("".join(out), kinds)


def apply_policy_fields(content: str, title: str | None, location: str | None, mode: str) -> tuple[Captured, str | None, str | None]:
    """The capture policy over every free-text field that is stored and indexed (content,
    title, location), not the content alone: a secret in a title is as stored as one in
    the body. Returns the captured content (with the kinds of all fields), title, location."""
    kinds: list[str] = []
    out: list[str | None] = []
    for value in (content, title, location):
        if value is None:
            out.append(None)
            continue
        captured = apply_policy(value, mode)
        kinds.extend(k for k in captured.redacted if k not in kinds)
        out.append(captured.content)
    return Captured(out[0] or "", tuple(kinds)), out[1], out[2]
