"""Remember and recall with the Python client.

    make run                                   # in another terminal: prints a token
    XMEMO_TOKEN=<token> .venv/bin/python examples/remember_recall.py

`XMEMO_URL` defaults to http://127.0.0.1:8787; without `XMEMO_TOKEN` the client uses
`XMEMO_CLIENT_ID`/`XMEMO_CLIENT_SECRET`, then the login `xmemo login` stored."""

from xmemo.client import NotFoundError, XMemo

with XMemo() as memory:
    stored = memory.remember(
        "Releases ship on Tuesdays, after the freeze review.", type="decision", location="examples/releases", bucket="examples"
    )
    print(("Duplicate of" if stored.duplicate else "Stored"), stored.memory.reference)

    for hit in memory.recall("when do releases ship?", limit=3).results:
        print(f"recall: {hit.reference} {hit.type} {hit.content!r}")

    pack = memory.context("release schedule", max_tokens=200)
    print(f"context: {pack.budget.used_items} item(s), {pack.budget.used_tokens} tokens")
    print(pack.context_text)

    print("listed:", sum(1 for _ in memory.list(bucket="examples")), "memory(ies) in bucket examples")
    print("forgot:", memory.forget(stored.memory.reference).deleted)
    try:
        memory.get(stored.memory.reference)
    except NotFoundError as exc:
        print("after forget:", exc)
