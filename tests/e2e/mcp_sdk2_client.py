"""Drive an XMemo MCP endpoint with the official `mcp` SDK's 2.x client (the line that
speaks 2026-07-28). Runs in its own venv (.venv-mcp2: one venv cannot hold mcp 1.x and
2.x), launched as a subprocess by tests/e2e/test_mcp_e2e.py, which asserts on the JSON
this prints.

    XMEMO_TOKEN=… .venv-mcp2/bin/python tests/e2e/mcp_sdk2_client.py URL '[["recall", {"query": "x"}], …]'

In arguments, the string "$REF" stands for the reference of the last memory stored."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def _substitute(value, ref):
    if value == "$REF":
        return ref
    if isinstance(value, dict):
        return {k: _substitute(v, ref) for k, v in value.items()}
    return value


async def main(url: str, calls: list) -> dict:
    token = os.environ["XMEMO_TOKEN"]
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="auto") as client:
            out = {
                "protocol_version": client.protocol_version,
                "server_name": client.server_info.name if client.server_info else None,
                "tools": [],
                "calls": [],
            }
            listed = await client.list_tools()
            out["tools"] = [{"name": t.name, "has_output_schema": t.output_schema is not None,
                             "read_only": t.annotations.read_only_hint if t.annotations else None}
                            for t in listed.tools]
            ref = None
            for name, arguments in calls:
                try:
                    result = await client.call_tool(name, _substitute(arguments, ref))
                except MCPError as exc:
                    out["calls"].append({"name": name, "rpc_error": exc.error.code})
                    continue
                text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
                found = re.match(r"(?:Stored|Duplicate of): Reference: (\S+)", text)
                ref = found.group(1) if found else ref
                out["calls"].append({"name": name, "is_error": result.is_error, "text": text,
                                     "structured": result.structured_content})
            return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], json.loads(sys.argv[2])))))
