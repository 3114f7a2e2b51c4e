"""What agents paste into `remember`: terminal output keeps its ANSI escape sequences
(colours, cursor moves, window titles). They carry no meaning once stored, so `remember`
removes them and says so; every other control character is stored as sent and `render`
shows it so that it cannot start a line (SPEC §5)."""

from __future__ import annotations

import re

# CSI (`ESC [ … final`, and its 8-bit form U+009B), OSC (`ESC ] … BEL|ST`), DCS/PM/APC
# strings (`ESC P|^|_ … ST`) and the two-character escapes (`ESC c`, `ESC =`, `ESC (B`)
ANSI_ESCAPE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[P^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
)
ANSI_STRIPPED = "ansi_escape_sequences"


def without_terminal_escapes(text: str) -> tuple[str, list[str]]:
    """The text without ANSI escape sequences, and what was removed (empty list: nothing)."""
    if "\x1b" not in text and "\x9b" not in text:
        return text, []
    cleaned = ANSI_ESCAPE.sub("", text)
    return cleaned, ([ANSI_STRIPPED] if cleaned != text else [])
