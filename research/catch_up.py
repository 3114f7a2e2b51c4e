"""What a search waits for when the embedded store's derived text index must catch up.

Past `textindex.LAG` changes the index commits the rows written since its last commit.
This writes `LAG` memories (no embedding; their words only) into a kept store, then times
the next searches (wall and CPU): the first one finds the index `LAG` changes behind. With
the code where a search catches the index up itself, that search holds the commit, the
merges it waits for and the watermark's fsync; with the code where a background thread
does it, the search scores the lagging rows and answers, and the catch-up's own duration
is reported apart. The probe memories are forgotten at the end (which the index catches up
with the same way). Run it with each version of the code (PYTHONPATH first for the old one).

    nice .venv/bin/python -m research.catch_up STORE.sqlite3 --out bench-out/latency/catch-up/new.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research.catch_up")
    p.add_argument("store", type=Path)
    p.add_argument("--searches", type=int, default=5)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)

    import xmemo
    from xmemo import tools
    from xmemo.auth import principal_from_claims, read_filter
    from xmemo.ids import new_reference
    from xmemo.models import Memory, boundary_of
    from xmemo.store import textindex
    from xmemo.store.sqlite import SQLiteStore

    store = SQLiteStore(args.store)
    principal = principal_from_claims({"sub": "bench", "scope": "xmemo/memory:read xmemo/memory:write"})
    rf = read_filter(principal, datetime.now(timezone.utc))
    query = "incident review"

    def search() -> tuple[float, float]:
        c, t = time.process_time(), time.perf_counter()
        store.search(query, None, rf, lexical_k=10, semantic_k=0, strict=True)
        return (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000

    search()  # the index opened, caught up with whatever was behind
    if hasattr(store._text, "wait"):
        store._text.wait()
    search()
    now = datetime.now(timezone.utc)
    probes = []
    for i in range(textindex.LAG):
        content = f"catch-up probe {i} incident review"
        probes.append(Memory(reference=new_reference(), type="note", content=content, location="probe", bucket="probe", owner="bench",
                             boundary=boundary_of("bench", None, None), created_at=now, updated_at=now,
                             content_sha256=tools.content_hash(content)))
    store.insert_many(probes)
    before = store._text.watermark
    timed = [search() for _ in range(args.searches)]
    caught = store._text.watermark != before  # by the search itself
    waited = None
    if hasattr(store._text, "wait"):
        t = time.perf_counter()
        store._text.wait()
        waited = (time.perf_counter() - t) * 1000
    out = {
        "code": str(Path(xmemo.__file__).parent), "store": str(args.store), "lag": textindex.LAG, "query": query,
        "searches_wall_cpu_ms": [[round(w, 1), round(c, 1)] for w, c in timed],
        "caught_up_by_the_first_search": caught, "background_catch_up_left_ms_after_the_searches": None if waited is None else round(waited, 1),
    }
    for m in probes:
        store.delete(rf, m.reference)
    search()
    if hasattr(store._text, "wait"):
        store._text.wait()
    store.close()
    print(json.dumps(out, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
