"""Export and import of memories as JSON Lines (one `Memory` per line, no embeddings).

Export reads through the tools, so it is filtered by the principal it runs as. Import
re-applies the capture policy, re-embeds, and is idempotent: a reference already stored
(or the same content in the same place) is counted as a duplicate, not written again."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import IO, Callable, Iterable, Iterator

from pydantic import ValidationError

from . import tools
from .auth import TEMPORARY, Principal
from .embedding import passage_embeddings
from .errors import CapturePolicyRefused
from .models import ListInput, Memory
from .policy import apply_policy_fields
from .services import Services


def export_memories(svc: Services, principal: Principal, out: IO[str], page: int = 100) -> int:
    """Write every live memory `principal` can see (temporary ones too when it holds the
    temporary scope), newest first; the count."""
    n, cursor = 0, None
    include_temporary = principal.has(TEMPORARY)
    while True:
        result = tools.list_memories(svc, principal, ListInput(limit=page, cursor=cursor, include_temporary=include_temporary))
        for memory in result.memories:
            out.write(json.dumps(memory.public_dict(), ensure_ascii=False) + "\n")
            n += 1
        if result.next_cursor is None:
            return n
        cursor = result.next_cursor


@dataclass
class ImportReport:
    stored: int = 0
    duplicates: int = 0
    redacted: int = 0
    errors: list[str] = field(default_factory=list)  # "line N: reason" (never the content)


def _parse(lines: Iterable[str], report: ImportReport) -> Iterator[Memory]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield Memory.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            kind = "not JSON" if isinstance(exc, json.JSONDecodeError) else f"{exc.error_count()} invalid field(s)"
            report.errors.append(f"line {number}: {kind}")


def import_memories(
    svc: Services,
    lines: Iterable[str],
    *,
    batch: int = 64,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Store the memories of a JSONL export; each batch is one atomic store write."""
    report = ImportReport()
    pending: list[Memory] = []

    def flush() -> None:
        if not pending:
            return
        ready: list[Memory] = []
        for m in pending:
            try:
                captured, title, location = apply_policy_fields(m.content, m.title, m.location, svc.capture.capture_policy)
            except CapturePolicyRefused as exc:
                report.errors.append(f"{m.reference}: {exc.message}")
                continue
            report.redacted += bool(captured.redacted)
            ready.append(
                m.model_copy(
                    update={
                        "content": captured.content,
                        "title": title,
                        "location": location,
                        "content_sha256": tools.content_hash(captured.content),
                        "superseded_by": None,
                    }
                )
            )
        if svc.embedder is not None and ready:
            vectors, states = passage_embeddings(svc.embedder, [m.content for m in ready])
            ready = [m.model_copy(update={"embedding": tuple(float(x) for x in v), "token_states": t}) for m, v, t in zip(ready, vectors, states)]
        for _, duplicate in svc.store.insert_many(ready):
            report.duplicates += duplicate
            report.stored += not duplicate
        if progress:
            progress(len(pending))
        pending.clear()

    for memory in _parse(lines, report):
        pending.append(memory)
        if len(pending) >= batch:
            flush()
    flush()
    return report
